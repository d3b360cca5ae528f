// The writing half of the protobuf wire format (io/wire_reader.h reads): varints, tags and
// length-delimited fields, for the writers that splice models at the wire level
// (rewrite/model_writer, grad/training_model_writer, io/model_fields).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "io/wire_reader.h"

namespace memopt::wire {

/// Bytes a varint of `v` takes (1 to 10).
size_t VarintSize(uint64_t v);
/// Appends `v` as a varint.
void PutVarint(std::string& out, uint64_t v);
/// Appends the tag of field `number` with wire type `type`.
void PutTag(std::string& out, uint32_t number, WireType type);
/// Appends a length-delimited field: tag, length, bytes.
void PutBytesField(std::string& out, uint32_t number, std::string_view bytes);
/// A length-delimited field as a new string.
std::string LengthField(uint32_t number, std::string_view payload);
/// Size of a length-delimited field of `number` with a payload of `payload` bytes.
uint64_t LengthDelimitedSize(uint32_t number, uint64_t payload);

}  // namespace memopt::wire
