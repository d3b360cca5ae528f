#include "plan/config.h"

#include <catch2/catch.hpp>

namespace memopt {
namespace {

MemoryOptConfig Parse(std::string_view text) {
  Expected<MemoryOptConfig> c = ParseMemoryOptConfig(text, "mem_opt.json");
  INFO(c.status().message());
  REQUIRE(c.ok());
  return std::move(c).value();
}

std::string ParseError(std::string_view text) {
  Expected<MemoryOptConfig> c = ParseMemoryOptConfig(text, "mem_opt.json");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == ErrorCode::kInvalidInput);
  return c.status().message();
}

}  // namespace

TEST_CASE("config: ORT's JSON array of plan strings", "[plan][config]") {
  MemoryOptConfig c = Parse(R"(["Gelu+:1:-1", "Dropout+:1:2,Cast+:2:0", ""])");
  REQUIRE(c.entries.size() == 3);
  CHECK(c.entries[0].cluster_id == "Gelu+");
  CHECK(c.entries[0].type == 1);
  CHECK(c.entries[0].count == -1);
  CHECK(c.entries[1].cluster_id == "Dropout+");
  CHECK(c.entries[1].count == 2);
  CHECK(c.entries[1].element == 1);
  CHECK(c.entries[2].cluster_id == "Cast+");
  CHECK(c.entries[2].type == 2);
  CHECK(c.entries[2].count == 0);
  CHECK(c.selectors.empty());
  CHECK(c.warnings.empty());
  CHECK(Parse("[]").entries.empty());
}

TEST_CASE("config: empty segments are dropped as ORT drops them", "[plan][config]") {
  MemoryOptConfig c = Parse(R"(["Gelu+::1:-1"])");
  REQUIRE(c.entries.size() == 1);
  CHECK(c.entries[0].cluster_id == "Gelu+");
  CHECK(c.entries[0].type == 1);
}

TEST_CASE("config: the last entry of a cluster id wins, with a warning", "[plan][config]") {
  MemoryOptConfig c = Parse(R"(["Gelu+:1:-1", "Add+:1:-1", "Gelu+:1:3"])");
  REQUIRE(c.entries.size() == 2);
  CHECK(c.entries[0].cluster_id == "Gelu+");
  CHECK(c.entries[0].count == 3);
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0] ==
        "mem_opt.json: element 2 \"Gelu+:1:3\" replaces element 0 \"Gelu+:1:-1\" (the last entry for a cluster id "
        "wins, as in ONNX Runtime)");
}

TEST_CASE("config: errors name the element and the plan", "[plan][config]") {
  CHECK(ParseError(R"(["Gelu+:1"])") ==
        "mem_opt.json: element 0 \"Gelu+:1\": 2 parts separated by ':', expected "
        "ClusterId:OptimizationType:RequestApplyCount, e.g. \"Gelu+:1:-1\" (see docs/config_format.md)");
  CHECK(ParseError(R"(["Gelu+:1:-1:4"])").find("4 parts") != std::string::npos);
  CHECK(ParseError(R"(["A+:1:-1", "Gelu+:x:-1"])") ==
        "mem_opt.json: element 1 \"Gelu+:x:-1\": optimization type 'x' is not an integer (use 0 none, 1 recompute, 2 "
        "compromised recompute)");
  CHECK(ParseError(R"(["Gelu+:3:-1"])") ==
        "mem_opt.json: element 0 \"Gelu+:3:-1\": invalid optimization type 3 (use 0 none, 1 recompute, 2 compromised "
        "recompute)");
  CHECK(ParseError(R"(["Gelu+:1:-2"])") ==
        "mem_opt.json: element 0 \"Gelu+:1:-2\": invalid apply count -2 (use -1 for every occurrence or N >= 0)");
  CHECK(ParseError(R"(["Gelu+:1:1abc"])").find("apply count '1abc' is not an integer") != std::string::npos);
  CHECK(ParseError(R"(["Gelu+:+1:-1"])").find("optimization type '+1'") != std::string::npos);
  CHECK(ParseError(R"({"Gelu+": 1})") ==
        "mem_opt.json: the config must be a JSON array of strings such as [\"Gelu+:1:-1\"], got object");
  CHECK(ParseError(R"(["Gelu+:1:-1", 3])") ==
        "mem_opt.json: element 1 is a number, but every element must be a string such as \"Gelu+:1:-1\"");
  CHECK(ParseError("[\"Gelu+:1:-1\"").find("mem_opt.json: not valid JSON (") == 0);
}

TEST_CASE("config: selectors pick occurrences", "[plan][config]") {
  MemoryOptConfig c = Parse(R"(["Add+:1:-1", "Add+@0.2-4.9:0:0"])");
  REQUIRE(c.entries.size() == 1);
  REQUIRE(c.selectors.size() == 1);
  CHECK(c.selectors[0].cluster_id == "Add+");
  CHECK(c.selectors[0].occurrences == std::vector<int>{0, 2, 3, 4, 9});
  CHECK(c.FindSelector("Add+") == &c.selectors[0]);
  CHECK(c.FindSelector("Gelu+") == nullptr);

  CHECK(ParseError(R"(["Add+@1:1:-1"])").find("a selector must be written \"Add+@...:0:0\"") != std::string::npos);
  CHECK(ParseError(R"(["Add+@1-x:0:0"])").find("bad occurrence '1-x'") != std::string::npos);
  CHECK(ParseError(R"(["Add+@3-1:0:0"])").find("bad occurrence '3-1'") != std::string::npos);
  CHECK(ParseError(R"(["Add+@1..2:0:0"])").find("bad occurrence ''") != std::string::npos);
  CHECK(ParseError(R"(["@1:0:0"])").find("selector without a cluster id") != std::string::npos);
}

TEST_CASE("config: selector strings compress ranges", "[plan][config]") {
  CHECK(SelectorString("Add+", {0, 2, 3, 4, 9}) == "Add+@0.2-4.9:0:0");
  CHECK(SelectorString("Add+", {5}) == "Add+@5:0:0");
  CHECK(SelectorString("Add+", {0, 1}) == "Add+@0-1:0:0");
  CHECK(EntryString("Gelu+", 2, -1) == "Gelu+:2:-1");
}

TEST_CASE("config: written files parse back to the same config", "[plan][config]") {
  MemoryOptConfig c;
  c.entries.push_back({"Gelu+", 1, -1, "", 0});
  c.entries.push_back({"Add+", 1, -1, "", 0});
  c.selectors.push_back({"Add+", {1, 3}, "", 0});
  std::string text = WriteMemoryOptConfig(c);
  CHECK(text == "[\n  \"Gelu+:1:-1\",\n  \"Add+:1:-1\",\n  \"Add+@1.3:0:0\"\n]\n");
  MemoryOptConfig back = Parse(text);
  REQUIRE(back.entries.size() == 2);
  CHECK(back.entries[1].cluster_id == "Add+");
  REQUIRE(back.selectors.size() == 1);
  CHECK(back.selectors[0].occurrences == std::vector<int>{1, 3});
  CHECK(WriteMemoryOptConfig(MemoryOptConfig{}) == "[]\n");
}

TEST_CASE("config: legacy inline string and count semantics names", "[plan][config]") {
  Expected<MemoryOptConfig> c = ParseInlineConfig("Gelu+:1:-1,Dropout+:1:-1", "--config");
  REQUIRE(c.ok());
  CHECK(c->entries.size() == 2);
  CHECK(ParseInlineConfig("Gelu+", "--config").status().message().find("--config: element 0 \"Gelu+\"") == 0);
  CountSemantics s;
  CHECK(ParseCountSemantics("ort", &s));
  CHECK(s == CountSemantics::kOrt);
  CHECK(ParseCountSemantics("documented", &s));
  CHECK(s == CountSemantics::kDocumented);
  CHECK_FALSE(ParseCountSemantics("all", &s));
}

}  // namespace memopt

namespace memopt {

TEST_CASE("config: splits name an occurrence and the readers that start groups", "[plan][config][split]") {
  MemoryOptConfig c = Parse(R"(["Conv+:1:-1", "Conv+@2/5.3.5:0:0", "Conv+@0/1:0:0"])");
  REQUIRE(c.splits.size() == 2);
  CHECK(c.splits[0].cluster_id == "Conv+");
  CHECK(c.splits[0].occurrence == 2);
  CHECK(c.splits[0].readers == std::vector<int>{3, 5});
  CHECK(c.splits[0].element == 1);
  CHECK(c.selectors.empty());
  // Written after the entry, by occurrence; parsed back the same.
  const std::string text = WriteMemoryOptConfig(c);
  CHECK(text == "[\n  \"Conv+:1:-1\",\n  \"Conv+@0/1:0:0\",\n  \"Conv+@2/3.5:0:0\"\n]\n");
  CHECK(WriteMemoryOptConfig(Parse(text)) == text);
  CHECK(SplitString("Add+", 1, {2, 4}) == "Add+@1/2.4:0:0");
  // The same occurrence again: the later one wins, with a warning.
  MemoryOptConfig twice = Parse(R"(["Conv+:1:-1", "Conv+@0/1:0:0", "Conv+@0/2:0:0"])");
  REQUIRE(twice.splits.size() == 1);
  CHECK(twice.splits[0].readers == std::vector<int>{2});
  CHECK(twice.warnings.size() == 1);
  CHECK(ParseError(R"(["Conv+@x/1:0:0"])").find("bad occurrence 'x' in the split") != std::string::npos);
  CHECK(ParseError(R"(["Conv+@0/0:0:0"])").find("bad reader '0' in the split") != std::string::npos);
  CHECK(ParseError(R"(["Conv+@0/:0:0"])").find("bad reader '' in the split") != std::string::npos);
  CHECK(ParseError(R"(["Conv+@0/1:1:-1"])").find("a selector must be written") != std::string::npos);
}

TEST_CASE("config: a split list may keep the original and give its groups private chains", "[plan][config][split]") {
  MemoryOptConfig c = Parse(R"(["Conv+:1:-1", "Conv+@1/2.k0.p:0:0", "Conv+@2/k2:0:0", "Conv+@0/p:0:0"])");
  REQUIRE(c.splits.size() == 3);
  CHECK(c.splits[0].readers == std::vector<int>{2});
  CHECK(c.splits[0].keep == 0);
  CHECK(c.splits[0].private_chains);
  CHECK(c.splits[1].readers.empty());
  CHECK(c.splits[1].keep == 2);
  CHECK_FALSE(c.splits[1].private_chains);
  CHECK(c.splits[2].keep == -1);
  CHECK(c.splits[2].private_chains);
  const std::string text = WriteMemoryOptConfig(c);
  CHECK(text == "[\n  \"Conv+:1:-1\",\n  \"Conv+@0/p:0:0\",\n  \"Conv+@1/2.k0.p:0:0\",\n  \"Conv+@2/k2:0:0\"\n]\n");
  CHECK(WriteMemoryOptConfig(Parse(text)) == text);
  CHECK(SplitString("Add+", 1, {3}, 1, true) == "Add+@1/3.k1.p:0:0");
  CHECK(ParseError(R"(["Conv+@0/k:0:0"])").find("bad keep 'k' in the split") != std::string::npos);
  CHECK(ParseError(R"(["Conv+@0/k-1:0:0"])").find("bad keep 'k-1' in the split") != std::string::npos);
  CHECK(ParseError(R"(["Conv+@0/q:0:0"])").find("bad reader 'q' in the split") != std::string::npos);
}

}  // namespace memopt
