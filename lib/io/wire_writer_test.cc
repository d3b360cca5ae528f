#include "io/wire_writer.h"

#include <catch2/catch.hpp>

namespace memopt::wire {
namespace {

TEST_CASE("wire writer: varints, tags and fields read back", "[io][wire]") {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{300}, ~uint64_t{0}}) {
    std::string s;
    PutVarint(s, v);
    CHECK(s.size() == VarintSize(v));
    uint64_t pos = 0, back = 0;
    REQUIRE(ReadVarint(reinterpret_cast<const uint8_t*>(s.data()), s.size(), pos, back));
    CHECK(back == v);
    CHECK(pos == s.size());
  }
  // Field 7 (ModelProto.graph), 3 bytes: tag 0x3a, length 3.
  const std::string field = LengthField(7, "abc");
  CHECK(field == std::string("\x3a\x03" "abc"));
  CHECK(LengthDelimitedSize(7, 3) == field.size());
  Reader r(reinterpret_cast<const uint8_t*>(field.data()), field.size());
  Field f;
  REQUIRE(r.Next(f));
  CHECK(f.number == 7);
  CHECK(f.type == WireType::kLengthDelimited);
  CHECK(f.AsString() == "abc");
}

}  // namespace
}  // namespace memopt::wire
