#include <catch2/catch.hpp>

#include "sym/sym_expr.h"
#include "util/closest_match.h"

namespace memopt {
namespace {

TEST_CASE("DimBindings::Parse accepts name=value and name:value", "[sym]") {
  auto dims = DimBindings::Parse("batch=8,seq_len=512");
  REQUIRE(dims.ok());
  CHECK(dims->Get("batch") == 8);
  CHECK(dims->Get("seq_len") == 512);
  CHECK(!dims->Get("other"));

  auto spaced = DimBindings::Parse(" batch : 8 , seq_len= 512 ");
  REQUIRE(spaced.ok());
  CHECK(spaced->values().size() == 2);
  CHECK(spaced->Get("seq_len") == 512);

  auto empty = DimBindings::Parse("");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  CHECK(DimBindings::Parse("   ")->empty());

  auto odd = DimBindings::Parse("Reshape_12_o0__d1=0");
  REQUIRE(odd.ok());
  CHECK(odd->Get("Reshape_12_o0__d1") == 0);
  CHECK(DimBindings::Parse("x=9223372036854775807")->Get("x") == INT64_MAX);
}

TEST_CASE("DimBindings::Parse errors quote the bad piece", "[sym]") {
  auto no_sep = DimBindings::Parse("batch8");
  REQUIRE(!no_sep.ok());
  CHECK(no_sep.status().code() == ErrorCode::kUsage);
  CHECK(no_sep.status().message() == "malformed --dims entry 'batch8': expected name=value");

  auto no_name = DimBindings::Parse("batch=8,=3");
  REQUIRE(!no_name.ok());
  CHECK(no_name.status().message() == "malformed --dims entry '=3': expected name=value");

  auto trailing = DimBindings::Parse("batch=8,");
  REQUIRE(!trailing.ok());
  CHECK(trailing.status().message() == "malformed --dims entry '': expected name=value");

  auto negative = DimBindings::Parse("batch=-1");
  REQUIRE(!negative.ok());
  CHECK(negative.status().code() == ErrorCode::kUsage);
  CHECK(negative.status().message() == "invalid value '-1' for dim 'batch' in --dims: expected a non-negative integer");

  CHECK(DimBindings::Parse("batch=").status().message() ==
        "invalid value '' for dim 'batch' in --dims: expected a non-negative integer");
  CHECK(DimBindings::Parse("batch=8x").status().message() ==
        "invalid value '8x' for dim 'batch' in --dims: expected a non-negative integer");
  CHECK(DimBindings::Parse("batch=1=2").status().message() ==
        "invalid value '1=2' for dim 'batch' in --dims: expected a non-negative integer");
  CHECK(DimBindings::Parse("batch=9223372036854775808").status().message() ==
        "value '9223372036854775808' for dim 'batch' in --dims does not fit in 64 bits");

  auto twice = DimBindings::Parse("batch=8,batch:9");
  REQUIRE(!twice.ok());
  CHECK(twice.status().message() == "dim 'batch' is given twice in --dims");
}

TEST_CASE("ClosestMatch suggests near names only", "[sym]") {
  std::vector<std::string> dims = {"batch", "seq_len", "hidden"};
  CHECK(ClosestMatch("btch", dims) == "batch");    // one edit; the limit is max(1, len/3)
  CHECK(ClosestMatch("bacth", dims) == "batch");     // an adjacent transposition is one edit
  CHECK(ClosestMatch("sacn", {"scan", "plan"}) == "scan");
  CHECK(ClosestMatch("bcath", dims).empty());        // two edits, over the limit 5/3
  CHECK(ClosestMatch("seq_lenght", dims) == "seq_len");  // three edits, limit 10/3 = 3
  CHECK(ClosestMatch("seqlen", dims) == "seq_len");
  CHECK(ClosestMatch("batch", dims) == "batch");
  CHECK(ClosestMatch("vocab", dims).empty());
  CHECK(ClosestMatch("", dims).empty());
  CHECK(ClosestMatch("x", {}).empty());
  // Ties go to the first candidate.
  CHECK(ClosestMatch("ab", {"ac", "ad"}) == "ac");
  // Short words still allow one edit.
  CHECK(ClosestMatch("b", {"a"}) == "a");
  CHECK(ClosestMatch("ba", {"cd"}).empty());
}

}  // namespace
}  // namespace memopt
