#include "analysis/op_table.h"

#include <catch2/catch.hpp>

namespace memopt {
namespace {

Node MakeNode(const std::string& domain, const std::string& op, int since_version) {
  Node node;
  node.id = 0;
  node.name = op + "_0";
  node.domain = domain;
  node.op_type = op;
  node.since_version = since_version;
  node.proto.set_op_type(op);
  node.proto.set_domain(domain);
  return node;
}

TEST_CASE("op table: built-in table holds ORT's HEAD rows", "[analysis][op_table]") {
  const OpTable& table = OpTable::Builtin();
  CHECK(table.size() == 51);  // 42 basic + 9 advanced rows of reference §3.5

  CHECK(table.IsRecomputable(MakeNode("", "Add", 14), 0));
  CHECK_FALSE(table.IsRecomputable(MakeNode("", "Add", 99), 1));  // version not listed
  CHECK(table.IsRecomputable(MakeNode("com.microsoft", "Gelu", 1), 0));
  CHECK(table.IsRecomputable(MakeNode("", "Gelu", 20), 0));
  CHECK_FALSE(table.IsRecomputable(MakeNode("", "Gelu", 1), 1));  // ONNX Gelu exists from 20 only
  CHECK_FALSE(table.IsRecomputable(MakeNode("", "Identity", 14), 1));
  CHECK_FALSE(table.IsRecomputable(MakeNode("com.microsoft", "YieldOp", 1), 1));

  // Advanced ops need probe level 1.
  CHECK_FALSE(table.IsRecomputable(MakeNode("", "MatMul", 13), 0));
  CHECK(table.IsRecomputable(MakeNode("", "MatMul", 13), 1));
  CHECK(table.IsRecomputable(MakeNode("", "LayerNormalization", 1), 1));
  CHECK(table.IsRecomputable(MakeNode("com.microsoft", "FusedMatMul", 1), 1));

  // Ignorable inputs depend on the since-version.
  CHECK(table.IgnorableInputs(MakeNode("", "Tile", 1)) == std::vector<int>{1, 2});
  CHECK(table.IgnorableInputs(MakeNode("", "Tile", 13)) == std::vector<int>{1});
  CHECK(table.IgnorableInputs(MakeNode("", "Slice", 1)).empty());
  CHECK(table.IgnorableInputs(MakeNode("", "Slice", 13)) == std::vector<int>{1, 2, 3, 4});
  CHECK(table.IgnorableInputs(MakeNode("", "Split", 2)).empty());
  CHECK(table.IgnorableInputs(MakeNode("", "Split", 18)) == std::vector<int>{1});
  CHECK(table.IgnorableInputs(MakeNode("", "Range", 11)) == std::vector<int>{0, 1, 2});
  CHECK(table.IgnorableInputs(MakeNode("com.microsoft", "BiasSoftmaxDropout", 1)) == std::vector<int>{2});
  CHECK(table.IgnorableInputs(MakeNode("", "Identity", 1)).empty());
}

TEST_CASE("op table: PythonOp needs an allow-listed func_name", "[analysis][op_table]") {
  const OpTable& table = OpTable::Builtin();
  Node op = MakeNode("com.microsoft", "PythonOp", 1);
  auto* attr = op.proto.add_attribute();
  attr->set_name("func_name");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s("flash_attn.bert_padding.IndexFirstAxis");
  CHECK(table.IsRecomputable(op, 0));
  attr->set_s("my_module.MyFunction");
  CHECK_FALSE(table.IsRecomputable(op, 1));
}

TEST_CASE("op table: parse errors name the entry", "[analysis][op_table]") {
  auto error_of = [](const std::string& text) {
    Expected<OpTable> t = OpTable::Parse(text, "my.json");
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == ErrorCode::kInvalidInput);
    return t.status().message();
  };
  CHECK_THAT(error_of("{\"schema_version\": 1, \"ops\": ["), Catch::StartsWith("my.json: invalid JSON"));
  CHECK_THAT(error_of("[]"), Catch::Contains("expected a JSON object"));
  CHECK_THAT(error_of("{\"ops\": []}"), Catch::Contains("missing field 'schema_version'"));
  CHECK_THAT(error_of("{\"schema_version\": 2, \"ops\": []}"), Catch::Contains("unsupported schema_version 2"));
  CHECK_THAT(error_of("{\"schema_version\": 1}"), Catch::Contains("missing field 'ops'"));
  CHECK_THAT(error_of(R"({"schema_version": 1, "ops": [{"domain": "", "op": "Add", "level": 0}]})"),
             Catch::Contains("ops[0] (op 'Add', domain ''): missing field 'versions'"));
  CHECK_THAT(error_of(R"({"schema_version": 1, "ops": [{"domain": "", "op": "Add", "level": 0, "verions": {}}]})"),
             Catch::Contains("unknown field 'verions'"));
  CHECK_THAT(error_of(R"({"schema_version": 1, "ops": [{"domain": "", "op": "Add", "level": 3, "versions": {}}]})"),
             Catch::Contains("'level' must be 0 (basic) or 1 (advanced)"));
  CHECK_THAT(
      error_of(R"({"schema_version": 1, "ops": [{"domain": "", "op": "Add", "level": 0, "versions": {"x": []}}]})"),
      Catch::Contains("version key 'x' is not a positive integer"));
  CHECK_THAT(
      error_of(R"({"schema_version": 1, "ops": [{"domain": "", "op": "Add", "level": 0, "versions": {"7": [-1]}}]})"),
      Catch::Contains("non-negative input indices"));
  CHECK_THAT(error_of(R"({"schema_version": 1, "ops": [
                 {"domain": "", "op": "Add", "level": 0, "versions": {"7": []}},
                 {"domain": "", "op": "Add", "level": 0, "versions": {"13": []}}]})"),
             Catch::Contains("ops[1]: duplicate entry for op 'Add'"));
}

TEST_CASE("op table: merge extends and overrides the built-in table", "[analysis][op_table]") {
  OpTable table = OpTable::Builtin();
  Expected<OpTable> extra = OpTable::Parse(R"({
    "schema_version": 1,
    "ops": [
      {"domain": "", "op": "Identity", "level": 0, "versions": {"14": [], "16": []}},
      {"domain": "", "op": "Tile", "level": 1, "versions": {"13": [1, 2]}},
      {"domain": "", "op": "Cast", "level": 0, "versions": {}, "enabled": false}
    ],
    "python_op_func_names": ["my_module.MyFunction"]})");
  REQUIRE(extra.ok());
  REQUIRE(table.Merge(*extra).ok());
  CHECK(table.IsRecomputable(MakeNode("", "Identity", 14), 0));
  CHECK_FALSE(table.IsRecomputable(MakeNode("", "Tile", 13), 0));  // now advanced
  CHECK(table.IsRecomputable(MakeNode("", "Tile", 13), 1));
  CHECK(table.IgnorableInputs(MakeNode("", "Tile", 13)) == std::vector<int>{1, 2});
  CHECK(table.IgnorableInputs(MakeNode("", "Tile", 1)) == std::vector<int>{1, 2});  // other versions kept
  CHECK_FALSE(table.IsRecomputable(MakeNode("", "Cast", 13), 1));
  CHECK(table.python_op_func_names().count("my_module.MyFunction") == 1);
  CHECK(table.python_op_func_names().count("flash_attn.bert_padding.IndexFirstAxis") == 1);
  // The built-in table itself is untouched.
  CHECK(OpTable::Builtin().IsRecomputable(MakeNode("", "Cast", 13), 0));
}

TEST_CASE("op table: cluster ids that need the extended table", "[analysis][op_table]") {
  CHECK(ClusterNeedsExtendedOps("Conv+Relu+"));        // Conv: memopt's extended table only
  CHECK(ClusterNeedsExtendedOps("Exp+"));
  CHECK_FALSE(ClusterNeedsExtendedOps("Gelu+"));       // ONNX Runtime's table lists Gelu
  CHECK_FALSE(ClusterNeedsExtendedOps("Add+Cast+"));
  CHECK_FALSE(ClusterNeedsExtendedOps("NoSuchOp+"));   // in neither table
  CHECK_FALSE(ClusterNeedsExtendedOps(""));
}

}  // namespace
}  // namespace memopt
