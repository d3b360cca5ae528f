// The loader's error messages: the committed bad inputs (tests/data/bad, made by
// scripts/make_bad_inputs.py) and models built here in memory.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "io/model_loader.h"
#include "test_data.h"

namespace memopt {

namespace {

namespace fs = std::filesystem;
using testing::SourcePath;

std::string ErrorOf(const Expected<Model>& m) {
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == ErrorCode::kInvalidInput);
  // One line.
  CHECK(m.status().message().find('\n') == std::string::npos);
  return m.status().message();
}

std::string BadInput(const std::string& name) { return ErrorOf(LoadModel(SourcePath("tests/data/bad/" + name))); }

onnx::ModelProto BaseModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(15);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  auto* n = g->add_node();
  n->set_name("relu");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

onnx::TensorProto* AddFloatInit(onnx::ModelProto& m, const std::string& name, std::vector<int64_t> dims) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

std::string Bytes(const onnx::ModelProto& m) {
  std::string s;
  REQUIRE(m.SerializeToString(&s));
  return s;
}

}  // namespace

TEST_CASE("Loader errors: committed bad inputs", "[loader]") {
  CHECK(BadInput("empty.onnx") == "file is empty, not an ONNX model");
  CHECK(BadInput("random.onnx").find("not a valid ONNX model (truncated or corrupt protobuf at byte ") == 0);
  CHECK(BadInput("truncated.onnx").find("not a valid ONNX model (truncated or corrupt protobuf at byte ") == 0);
  CHECK(BadInput("missing_external.onnx") ==
        "initializer 'w' refers to external data file 'w.bin' which does not exist (looked in " +
            SourcePath("tests/data/bad") + ")");
  CHECK(BadInput("short_external.onnx") ==
        "initializer 'w' refers to external data file 'short_external.bin' which is 100 bytes, "
        "but the tensor needs bytes 0..4000");
  CHECK(BadInput("dup_producer.onnx") == "tensor 't' is produced twice: by node 'a' (Add) and node 'b' (Mul)");
  CHECK(BadInput("dangling_input.onnx") ==
        "node 'a' (Add) reads tensor 'ghost' that no node, graph input or initializer provides");
  CHECK(BadInput("bad_raw_size.onnx") ==
        "initializer 'w' has 8 bytes of raw_data, but its dims [3] of float need 12 bytes");
  CHECK(ErrorOf(LoadModel(SourcePath("tests/data/bad/no_such_file.onnx"))).find("cannot open the model file") == 0);
  CHECK(ErrorOf(LoadModel(SourcePath("tests/data/bad"))).find("is a directory") == 0);

  // Without the external-data check the same models load.
  LoadOptions no_check;
  no_check.check_external_data = false;
  auto m = LoadModel(SourcePath("tests/data/bad/missing_external.onnx"), no_check);
  REQUIRE(m.ok());
  const Value& w = m->graph.value(m->graph.FindValue("w"));
  REQUIRE(w.initializer.has_value());
  CHECK(w.initializer->storage == InitializerInfo::Storage::kExternal);
  CHECK(w.initializer->external_location == "w.bin");
}

TEST_CASE("Loader: tiny model with real external data", "[loader]") {
  auto m = LoadModel(SourcePath("tests/data/tiny_external/model.onnx"));
  REQUIRE(m.ok());
  CHECK(m->base_dir == SourcePath("tests/data/tiny_external"));
  const Value& w = m->graph.value(m->graph.FindValue("w"));
  REQUIRE(w.initializer.has_value());
  CHECK(w.initializer->storage == InitializerInfo::Storage::kExternal);
  CHECK(w.initializer->external_location == "weights.bin");
  CHECK(w.initializer->external_offset == 64);
  CHECK(w.initializer->external_length == std::optional<uint64_t>(4000));
  CHECK(w.initializer->dims == std::vector<int64_t>{1000});
  CHECK(ShapeToString(*w.info.shape) == "[1000]");
  CHECK_FALSE(w.known_values.has_value());
}

TEST_CASE("Loader errors: header checks", "[loader]") {
  auto m = BaseModel();
  REQUIRE(LoadModelFromBytes(Bytes(m)).ok());
  m.set_ir_version(2);
  CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "unsupported ir_version 2 (memopt reads ir_version 3 and newer)");
  m.set_ir_version(0);
  CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "invalid ir_version 0 (memopt reads ir_version 3 and newer)");
  m.set_ir_version(-4);
  CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "invalid ir_version -4 (memopt reads ir_version 3 and newer)");
  m.clear_ir_version();
  CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "model has no ir_version (memopt reads ir_version 3 and newer)");
  m.set_ir_version(13);
  m.mutable_opset_import(0)->set_version(-1);
  CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "invalid opset version -1 for the ai.onnx domain");
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  m.mutable_opset_import(0)->set_version(23);
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(-3);
  CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "invalid opset version -3 for domain 'com.example'");
  custom->set_version(1);
  auto ok = LoadModelFromBytes(Bytes(m));
  REQUIRE(ok.ok());
  CHECK(ok->graph.OpsetVersion("") == 23);
  CHECK(ok->warnings.empty());

  onnx::ModelProto no_graph;
  no_graph.set_ir_version(8);
  no_graph.set_producer_name("x");
  CHECK(ErrorOf(LoadModelFromBytes(Bytes(no_graph))) == "model has no graph");
  CHECK(ErrorOf(LoadModelFromBytes("")) == "file is empty, not an ONNX model");
}

TEST_CASE("Loader: newer ir_versions and opsets than memopt knows load, with a warning", "[loader]") {
  auto m = BaseModel();
  m.set_ir_version(14);
  m.mutable_opset_import(0)->set_version(23);
  // Model fields no IR version defines yet (numbers 100 and 101: a varint and a length-delimited
  // one) are skipped.
  std::string bytes = Bytes(m);
  bytes += std::string("\xa0\x06\x01", 3);         // field 100, varint 1
  bytes += std::string("\xaa\x06\x02\x08\x01", 5);  // field 101, 2 bytes
  auto newer = LoadModelFromBytes(bytes);
  INFO(newer.status().message());
  REQUIRE(newer.ok());
  CHECK(newer->ir_version == 14);
  CHECK(newer->graph.nodes.size() == 1);
  CHECK(newer->warnings ==
        std::vector<std::string>{"ir_version 14 is newer than memopt knows (13); loaded anyway, fields added since "
                                 "are ignored"});

  m.set_ir_version(13);
  m.mutable_opset_import(0)->set_version(29);
  auto opset = LoadModelFromBytes(Bytes(m));
  REQUIRE(opset.ok());
  CHECK(opset->graph.OpsetVersion("") == 29);
  CHECK(opset->warnings == std::vector<std::string>{"opset 29 of the ai.onnx domain is newer than memopt knows (28); "
                                                    "loaded anyway, ops are read as in opset 28"});
  // Other domains have no newest version: com.microsoft 2 loads without a note.
  m.mutable_opset_import(0)->set_version(28);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(2);
  auto other = LoadModelFromBytes(Bytes(m));
  REQUIRE(other.ok());
  CHECK(other->warnings.empty());

  // The committed model (scripts/make_version_models.sh): ir_version 14, opset 23, field 100.
  auto file = LoadModel(SourcePath("tests/data/versions/ir14_opset23.onnx"));
  INFO(file.status().message());
  REQUIRE(file.ok());
  CHECK(file->graph.nodes.size() == 3);
  CHECK(file->graph.OpsetVersion("") == 23);
  CHECK(file->warnings.size() == 1);
}

TEST_CASE("Loader errors: graph structure", "[loader]") {
  SECTION("node output shadows a graph input") {
    auto m = BaseModel();
    m.mutable_graph()->mutable_node(0)->set_output(0, "x");
    m.mutable_graph()->mutable_output(0)->set_name("x");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) ==
          "tensor 'x' is produced twice: by graph input 'x' and node 'relu' (Relu)");
  }
  SECTION("node output shadows an initializer") {
    auto m = BaseModel();
    AddFloatInit(m, "y", {1})->add_float_data(1.0f);
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) ==
          "tensor 'y' is produced twice: by initializer 'y' and node 'relu' (Relu)");
  }
  SECTION("one node lists an output twice") {
    auto m = BaseModel();
    auto* n = m.mutable_graph()->mutable_node(0);
    n->set_op_type("Split");
    n->clear_name();
    n->add_output("y");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) ==
          "tensor 'y' is produced twice: by node 'Split#0' (Split) and node 'Split#0' (Split)");
  }
  SECTION("graph output nobody provides") {
    auto m = BaseModel();
    m.mutable_graph()->add_output()->set_name("ghost");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) ==
          "graph output 'ghost' is not produced by any node, graph input or initializer");
  }
  SECTION("duplicate graph input / initializer") {
    auto m = BaseModel();
    *m.mutable_graph()->add_input() = m.graph().input(0);
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "graph input 'x' is listed twice");
    m = BaseModel();
    AddFloatInit(m, "w", {1})->add_float_data(1.0f);
    AddFloatInit(m, "w", {1})->add_float_data(1.0f);
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "initializer 'w' is listed twice");
  }
  SECTION("node without op_type") {
    auto m = BaseModel();
    m.mutable_graph()->mutable_node(0)->clear_op_type();
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "node #0 has no op_type");
  }
  SECTION("a node that is not a NodeProto") {
    auto m = BaseModel();
    std::string bytes = Bytes(m);
    // Re-encode: graph field with one node whose payload is garbage (field 1, wire type 7).
    onnx::ModelProto header = m;
    header.clear_graph();
    std::string graph_payload = std::string("\x0a\x02\x0f\x00", 4);  // node #0: 2 bytes, bad tag
    std::string out = Bytes(header) + "\x3a" + static_cast<char>(graph_payload.size()) + graph_payload;
    CHECK(ErrorOf(LoadModelFromBytes(out)).find("node #0 is not a valid NodeProto (corrupt protobuf at byte ") == 0);
  }
  SECTION("an optional input left empty is fine") {
    auto m = BaseModel();
    m.mutable_graph()->mutable_node(0)->add_input("");
    m.mutable_graph()->mutable_node(0)->add_output("");
    auto ok = LoadModelFromBytes(Bytes(m));
    REQUIRE(ok.ok());
    CHECK(ok->graph.nodes[0].inputs.back() == kNone);
    CHECK(ok->graph.nodes[0].outputs.back() == kNone);
  }
}

TEST_CASE("Loader errors: declared dims whose byte count overflows", "[loader]") {
  CHECK(BadInput("huge_dims.onnx") ==
        "tensor 'x' declares shape [1099511627776, 1099511627776] (float), whose byte count overflows 64 "
        "bits; fix the dims in the model");
  auto m = BaseModel();
  auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  shape->add_dim()->set_dim_value(int64_t{1} << 62);  // 2^62 floats = 2^64 bytes, even at batch 1
  CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))).find("tensor 'x' declares shape [4, batch, 4611686018427387904]") == 0);
  shape->mutable_dim(2)->set_dim_value(int64_t{1} << 59);  // 2^63 bytes: still one past INT64_MAX
  CHECK_FALSE(LoadModelFromBytes(Bytes(m)).ok());
  shape->mutable_dim(2)->set_dim_value(int64_t{1} << 58);  // 2^62 bytes: representable
  CHECK(LoadModelFromBytes(Bytes(m)).ok());
}

TEST_CASE("Loader errors: initializer data", "[loader]") {
  SECTION("dims whose size overflows") {
    auto m = BaseModel();
    AddFloatInit(m, "huge", {int64_t{1} << 40, int64_t{1} << 30});
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))).find("initializer 'huge' has dims [1099511627776, 1073741824]") == 0);
    m = BaseModel();
    AddFloatInit(m, "big", {int64_t{1} << 31, int64_t{1} << 31});
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) ==
          "initializer 'big' has dims [2147483648, 2147483648] of float whose byte size overflows int64");
    m = BaseModel();
    AddFloatInit(m, "neg", {2, -1});
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "initializer 'neg' has a negative dim in [2, -1]");
  }
  SECTION("no data, unknown type") {
    auto m = BaseModel();
    AddFloatInit(m, "empty", {2});
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "initializer 'empty' has dims [2] but no data");
    m = BaseModel();
    AddFloatInit(m, "odd", {1})->set_data_type(99);
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "initializer 'odd' has unknown data type 99");
    m = BaseModel();
    AddFloatInit(m, "zero", {0, 5});  // no elements, no data: fine
    CHECK(LoadModelFromBytes(Bytes(m)).ok());
  }
  SECTION("small integer count mismatch") {
    auto m = BaseModel();
    auto* t = AddFloatInit(m, "shape", {3});
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(1);
    t->add_int64_data(2);
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "initializer 'shape' holds 2 values, but its dims [3] need 3");
  }
  SECTION("external data locations") {
    auto m = BaseModel();
    auto* t = AddFloatInit(m, "w", {4});
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("/etc/passwd");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) ==
          "initializer 'w' has an absolute external data location '/etc/passwd'; locations must be relative to "
          "the model's folder");
    e->set_value("sub/../../w.bin");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) ==
          "initializer 'w' has external data location 'sub/../../w.bin' outside the model's folder");
    e->set_value("");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m))) == "initializer 'w' is stored as external data but has no 'location'");
    e->set_value("weights.bin");
    auto* off = t->add_external_data();
    off->set_key("offset");
    off->set_value("12x");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m), SourcePath("tests/data/tiny_external"))) ==
          "initializer 'w' has an invalid external data offset '12x'");
    off->set_value("4000");
    auto len = t->add_external_data();
    len->set_key("length");
    len->set_value("8");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m), SourcePath("tests/data/tiny_external"))) ==
          "initializer 'w' has external data length 8, but its dims [4] of float need 16 bytes");
    len->set_value("16");
    off->set_value("4050");
    CHECK(ErrorOf(LoadModelFromBytes(Bytes(m), SourcePath("tests/data/tiny_external"))) ==
          "initializer 'w' refers to external data file 'weights.bin' which is 4064 bytes, but the tensor needs "
          "bytes 4050..4066");
    off->set_value("4048");
    CHECK(LoadModelFromBytes(Bytes(m), SourcePath("tests/data/tiny_external")).ok());
  }
}

}  // namespace memopt
