#include "exec/tensor_io.h"

#include "io/model_loader.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <catch2/catch.hpp>

namespace memopt {
namespace {

onnx::TensorProto Proto(DataType dt, std::vector<int64_t> dims) {
  onnx::TensorProto p;
  p.set_name("t");
  p.set_data_type(static_cast<int32_t>(dt));
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("memopt_tensor_io_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST_CASE("tensor io: typed data fields", "[exec][tensor_io]") {
  SECTION("float_data") {
    auto p = Proto(DataType::kFloat, {2});
    p.add_float_data(1.5f);
    p.add_float_data(-2.0f);
    auto t = TensorFromProto(p);
    REQUIRE(t.ok());
    CHECK(t->Describe() == "float[2]");
    CHECK(t->data<float>()[1] == -2.0f);
  }
  SECTION("int32_data holds the narrow types") {
    auto h = Proto(DataType::kFloat16, {2});
    h.add_int32_data(0x3c00);
    h.add_int32_data(0xc000);
    auto th = TensorFromProto(h);
    REQUIRE(th.ok());
    CHECK(th->GetAsDouble(0) == 1.0);
    CHECK(th->GetAsDouble(1) == -2.0);
    auto bf = Proto(DataType::kBfloat16, {1});
    bf.add_int32_data(0x3f80);
    CHECK(TensorFromProto(bf)->GetAsDouble(0) == 1.0);
    auto b = Proto(DataType::kBool, {3});
    for (int v : {1, 0, 1}) b.add_int32_data(v);
    CHECK(TensorFromProto(b)->ToInt64Vector() == std::vector<int64_t>{1, 0, 1});
    auto i8 = Proto(DataType::kInt8, {2});
    i8.add_int32_data(-5);
    i8.add_int32_data(7);
    CHECK(TensorFromProto(i8)->ToInt64Vector() == std::vector<int64_t>{-5, 7});
    auto u16 = Proto(DataType::kUint16, {1});
    u16.add_int32_data(65535);
    CHECK(TensorFromProto(u16)->GetAsDouble(0) == 65535.0);
    auto i32 = Proto(DataType::kInt32, {1});
    i32.add_int32_data(-123456);
    CHECK(TensorFromProto(i32)->GetAsDouble(0) == -123456.0);
  }
  SECTION("int64, double, uint64, string") {
    auto i = Proto(DataType::kInt64, {2});
    i.add_int64_data(int64_t{1} << 40);
    i.add_int64_data(-1);
    CHECK(TensorFromProto(i)->ToInt64Vector() == std::vector<int64_t>{int64_t{1} << 40, -1});
    auto d = Proto(DataType::kDouble, {1});
    d.add_double_data(0.1);
    CHECK(TensorFromProto(d)->GetAsDouble(0) == 0.1);
    auto u = Proto(DataType::kUint64, {1});
    u.add_uint64_data(~uint64_t{0});
    CHECK(TensorFromProto(u)->data<uint64_t>()[0] == ~uint64_t{0});
    auto u32 = Proto(DataType::kUint32, {1});
    u32.add_uint64_data(4000000000u);
    CHECK(TensorFromProto(u32)->data<uint32_t>()[0] == 4000000000u);
    auto s = Proto(DataType::kString, {2});
    s.add_string_data("a");
    s.add_string_data("bc");
    auto ts = TensorFromProto(s);
    REQUIRE(ts.ok());
    CHECK(ts->strings() == std::vector<std::string>{"a", "bc"});
  }
  SECTION("raw_data is little-endian bytes") {
    auto p = Proto(DataType::kInt32, {2});
    const unsigned char bytes[] = {1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    p.set_raw_data(std::string(reinterpret_cast<const char*>(bytes), sizeof bytes));
    CHECK(TensorFromProto(p)->ToInt64Vector() == std::vector<int64_t>{1, -1});
  }
  SECTION("empty tensors and scalars") {
    CHECK(TensorFromProto(Proto(DataType::kFloat, {0, 3}))->numel() == 0);
    auto s = Proto(DataType::kFloat, {});
    s.add_float_data(3.0f);
    CHECK(TensorFromProto(s)->rank() == 0);
  }
}

TEST_CASE("tensor io: errors name the tensor", "[exec][tensor_io]") {
  auto p = Proto(DataType::kFloat, {3});
  p.add_float_data(1.0f);
  auto t = TensorFromProto(p);
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().message() == "tensor 't': float_data holds 1 values but the shape has 3 elements");
  auto raw = Proto(DataType::kFloat, {2});
  raw.set_raw_data("abc");
  CHECK(TensorFromProto(raw).status().message() == "tensor 't': raw_data has 3 bytes, float[2] needs 8");
  auto c = Proto(DataType::kComplex64, {1});
  CHECK(TensorFromProto(c).status().code() == ErrorCode::kUnsupported);
  // A huge declared shape without the data is an error, not an allocation of the shape.
  auto huge = Proto(DataType::kFloat, {int64_t{1} << 40, 1024});
  CHECK(TensorFromProto(huge).status().message() ==
        "tensor 't': float_data holds 0 values but the shape has 1125899906842624 elements");
  auto huge_raw = Proto(DataType::kDouble, {int64_t{1} << 40});
  huge_raw.set_raw_data("abcdefgh");
  CHECK(TensorFromProto(huge_raw).status().message() ==
        "tensor 't': raw_data has 8 bytes, double[1099511627776] needs 8796093022208");
}

TEST_CASE("tensor io: external data relative to the base folder", "[exec][tensor_io]") {
  auto dir = TempDir("ext");
  {
    std::ofstream out(dir / "w.bin", std::ios::binary);
    const float values[] = {9.0f, 1.0f, 2.0f, 3.0f};
    out.write(reinterpret_cast<const char*>(values), sizeof values);
  }
  auto p = Proto(DataType::kFloat, {3});
  p.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = p.add_external_data();
  e->set_key("location");
  e->set_value("w.bin");
  e = p.add_external_data();
  e->set_key("offset");
  e->set_value("4");
  auto t = TensorFromProto(p, dir.string());
  REQUIRE(t.ok());
  CHECK(t->GetAsDouble(0) == 1.0);
  CHECK(t->GetAsDouble(2) == 3.0);
  e->set_value("8");  // offset 8 + 12 bytes > 16
  CHECK_FALSE(TensorFromProto(p, dir.string()).ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("tensor io: files round-trip", "[exec][tensor_io]") {
  auto dir = TempDir("files");
  Tensor t(DataType::kFloat16, {2, 2});
  for (int64_t i = 0; i < 4; ++i) t.SetFromDouble(i, 0.5 * static_cast<double>(i));
  const std::string path = (dir / "x.pb").string();
  REQUIRE(WriteTensorFile(path, t, "x:0").ok());
  std::string name;
  auto back = ReadTensorFile(path, &name);
  REQUIRE(back.ok());
  CHECK(name == "x:0");
  CHECK(back->Describe() == "float16[2, 2]");
  CHECK(back->GetAsDouble(3) == 1.5);
  Tensor s(DataType::kString, {1});
  s.strings()[0] = "hello";
  REQUIRE(WriteTensorFile(path, s, "s").ok());
  CHECK(ReadTensorFile(path)->strings()[0] == "hello");
  CHECK_FALSE(ReadTensorFile((dir / "missing.pb").string()).ok());
  std::filesystem::remove_all(dir);
}

TEST_CASE("tensor io: an ONNX test-data set binds inputs and expected outputs", "[exec][tensor_io]") {
  auto model = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] a, float[2] b) => (float[2] sum, float[2] prod) {
      sum = Add(a, b)
      prod = Mul(a, b)
    })");
  REQUIRE(model.ok());
  const Graph& graph = model->graph;
  auto dir = TempDir("test_set");
  Tensor t(DataType::kFloat, {2});
  // As the ONNX backend tests store them: tensor names of their own, matched by position.
  REQUIRE(WriteTensorFile((dir / "input_0.pb").string(), t, "x").ok());
  REQUIRE(WriteTensorFile((dir / "input_1.pb").string(), t, "y").ok());
  REQUIRE(WriteTensorFile((dir / "output_0.pb").string(), t, "z").ok());
  REQUIRE(WriteTensorFile((dir / "expected_prod.pb").string(), t, "prod").ok());  // by name
  std::map<std::string, ExpectedOutput> expected;
  auto feeds = ReadInputDir(dir.string(), graph, &expected);
  REQUIRE(feeds.ok());
  CHECK(feeds->size() == 2);
  CHECK(feeds->count("a") == 1);
  CHECK(feeds->count("b") == 1);
  REQUIRE(expected.size() == 2);
  CHECK(expected.at("sum").file == (dir / "output_0.pb").string());
  CHECK(expected.at("prod").file == (dir / "expected_prod.pb").string());
  // Without a place for them, expected outputs are skipped (bench, fixtures).
  CHECK(ReadInputDir(dir.string(), graph)->size() == 2);
  // Two files for one output, and numbers past the graph's outputs, are errors naming the files.
  REQUIRE(WriteTensorFile((dir / "output_1.pb").string(), t, "w").ok());
  CHECK(ReadInputDir(dir.string(), graph, &expected).status().message() ==
        "output 'prod' is given twice: " + (dir / "expected_prod.pb").string() + " and " +
            (dir / "output_1.pb").string());
  std::filesystem::remove(dir / "expected_prod.pb");
  std::filesystem::remove(dir / "output_1.pb");
  REQUIRE(WriteTensorFile((dir / "output_5.pb").string(), t, "w").ok());
  CHECK(ReadInputDir(dir.string(), graph, &expected).status().message() ==
        (dir / "output_5.pb").string() +
            ": tensor 'w' matches no graph input or output by name and the model has only 2 outputs");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace memopt
