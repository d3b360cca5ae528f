#include "io/wire_writer.h"

namespace memopt::wire {

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutTag(std::string& out, uint32_t number, WireType type) {
  PutVarint(out, (static_cast<uint64_t>(number) << 3) | static_cast<uint64_t>(type));
}

void PutBytesField(std::string& out, uint32_t number, std::string_view bytes) {
  PutTag(out, number, WireType::kLengthDelimited);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

std::string LengthField(uint32_t number, std::string_view payload) {
  std::string out;
  PutBytesField(out, number, payload);
  return out;
}

uint64_t LengthDelimitedSize(uint32_t number, uint64_t payload) {
  return VarintSize(static_cast<uint64_t>(number) << 3) + VarintSize(payload) + payload;
}

}  // namespace memopt::wire
