// A bounds-checked reader for the protobuf wire format over a byte range (a memory-mapped file or
// a buffer), used to walk ModelProto / GraphProto / TensorProto without protobuf's whole-message
// parse (which stops at 2 GB and would copy every weight).
//
// Every read is checked against the end of the range; every step advances at least one byte, so
// a walk always terminates. Malformed input (varints longer than 10 bytes, lengths past the end,
// field number 0, group and reserved wire types 3/4/6/7) stops the reader with failed() set and
// error_offset() pointing at the byte where the problem starts (absolute, i.e. including the
// reader's base offset in the file).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace memopt::wire {

enum class WireType : uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,  // rejected
  kEndGroup = 4,    // rejected
  kFixed32 = 5,
};

/// Longest valid varint (a 64-bit value takes at most 10 bytes).
constexpr int kMaxVarintBytes = 10;
/// Largest field number protobuf allows (2^29 - 1).
constexpr uint64_t kMaxFieldNumber = (uint64_t{1} << 29) - 1;

/// One decoded field. For kLengthDelimited the payload is [data, data + size); the payload is not
/// touched by the reader (a weight blob is skipped by offset arithmetic only).
struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;             ///< payload of kVarint / kFixed32 / kFixed64
  const uint8_t* data = nullptr;  ///< payload of kLengthDelimited
  uint64_t size = 0;              ///< payload size of kLengthDelimited
  uint64_t offset = 0;            ///< absolute offset of the field's tag
  uint64_t data_offset = 0;       ///< absolute offset of the payload
  uint64_t end = 0;               ///< absolute offset one past the field (any wire type)

  std::string_view AsString() const {
    return {reinterpret_cast<const char*>(data), static_cast<size_t>(size)};
  }
  /// Absolute offset one past the payload.
  uint64_t end_offset() const { return end; }
};

/// Decodes one varint from [data + pos, data + size); advances pos. False (pos unchanged) when
/// the varint runs past the end or is longer than kMaxVarintBytes.
bool ReadVarint(const uint8_t* data, uint64_t size, uint64_t& pos, uint64_t& out);

class Reader {
 public:
  /// Reads [data, data + size); `base_offset` is the absolute offset of `data` (for messages).
  Reader(const uint8_t* data, uint64_t size, uint64_t base_offset = 0)
      : data_(data), size_(data == nullptr ? 0 : size), base_(base_offset) {}
  /// Reader over the payload of a length-delimited field.
  static Reader Sub(const Field& field) { return Reader(field.data, field.size, field.data_offset); }

  /// Reads the next field into `field`. Returns false at the end of the range or when the input
  /// is malformed (then failed() is true).
  bool Next(Field& field);

  bool failed() const { return failed_; }
  /// Absolute offset of the first malformed byte (valid when failed()).
  uint64_t error_offset() const { return base_ + error_pos_; }
  /// Absolute offset of the next unread byte.
  uint64_t position() const { return base_ + pos_; }

 private:
  bool Fail(uint64_t at) {
    failed_ = true;
    error_pos_ = at;
    pos_ = size_;
    return false;
  }

  const uint8_t* data_;
  uint64_t size_;
  uint64_t base_;
  uint64_t pos_ = 0;
  bool failed_ = false;
  uint64_t error_pos_ = 0;
};

/// Calls `fn(uint64_t)` for each value of a repeated varint field occurrence, packed
/// (kLengthDelimited) or not (kVarint). Returns false when a packed payload is malformed.
template <typename Fn>
bool ForEachVarint(const Field& field, Fn&& fn) {
  if (field.type == WireType::kVarint) {
    fn(field.value);
    return true;
  }
  if (field.type != WireType::kLengthDelimited) return false;
  uint64_t pos = 0;
  while (pos < field.size) {
    uint64_t v = 0;
    if (!ReadVarint(field.data, field.size, pos, v)) return false;
    fn(v);
  }
  return true;
}

/// Little-endian load of `n` (<= 8) bytes.
uint64_t LoadLittleEndian(const uint8_t* p, int n);

}  // namespace memopt::wire
