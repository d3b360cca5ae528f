#include "io/wire_reader.h"

namespace memopt::wire {

bool ReadVarint(const uint8_t* data, uint64_t size, uint64_t& pos, uint64_t& out) {
  uint64_t result = 0;
  uint64_t p = pos;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    if (p >= size) return false;
    const uint8_t byte = data[p++];
    result |= static_cast<uint64_t>(byte & 0x7F) << (7 * i);
    if ((byte & 0x80) == 0) {
      out = result;
      pos = p;
      return true;
    }
  }
  return false;  // more than 10 bytes
}

bool Reader::Next(Field& field) {
  if (failed_ || pos_ >= size_) return false;
  const uint64_t tag_pos = pos_;
  uint64_t tag = 0;
  if (!ReadVarint(data_, size_, pos_, tag)) return Fail(tag_pos);
  const uint64_t number = tag >> 3;
  const auto type = static_cast<uint8_t>(tag & 7);
  if (number == 0 || number > kMaxFieldNumber) return Fail(tag_pos);

  field = Field{};
  field.number = static_cast<uint32_t>(number);
  field.offset = base_ + tag_pos;
  switch (type) {
    case 0: {  // varint
      field.type = WireType::kVarint;
      field.data_offset = base_ + pos_;
      if (!ReadVarint(data_, size_, pos_, field.value)) return Fail(pos_);
      field.end = base_ + pos_;
      return true;
    }
    case 1: {  // fixed64
      field.type = WireType::kFixed64;
      field.data_offset = base_ + pos_;
      if (size_ - pos_ < 8) return Fail(pos_);
      field.value = LoadLittleEndian(data_ + pos_, 8);
      pos_ += 8;
      field.end = base_ + pos_;
      return true;
    }
    case 2: {  // length-delimited
      field.type = WireType::kLengthDelimited;
      const uint64_t len_pos = pos_;
      uint64_t len = 0;
      if (!ReadVarint(data_, size_, pos_, len)) return Fail(len_pos);
      if (len > size_ - pos_) return Fail(len_pos);
      field.data = data_ + pos_;
      field.size = len;
      field.data_offset = base_ + pos_;
      pos_ += len;
      field.end = base_ + pos_;
      return true;
    }
    case 5: {  // fixed32
      field.type = WireType::kFixed32;
      field.data_offset = base_ + pos_;
      if (size_ - pos_ < 4) return Fail(pos_);
      field.value = LoadLittleEndian(data_ + pos_, 4);
      pos_ += 4;
      field.end = base_ + pos_;
      return true;
    }
    default:  // groups (3, 4) and the reserved types 6, 7
      return Fail(tag_pos);
  }
}

uint64_t LoadLittleEndian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n && i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace memopt::wire
