// The wire reader's bounds checks, and the loader on corrupt, deeply nested and huge inputs.
#include "io/wire_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <catch2/catch.hpp>

#include "io/model_loader.h"
#include "test_data.h"

namespace memopt {

namespace {

using wire::Field;
using wire::Reader;
using wire::WireType;

std::vector<uint8_t> B(std::initializer_list<int> bytes) {
  std::vector<uint8_t> v;
  for (int b : bytes) v.push_back(static_cast<uint8_t>(b));
  return v;
}

/// Tag + length + payload of a length-delimited field.
std::string LenField(uint32_t number, const std::string& payload) {
  std::string out;
  uint64_t tag = (uint64_t{number} << 3) | 2;
  for (uint64_t v : {tag, uint64_t{payload.size()}}) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  return out + payload;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("Wire reader: varints", "[loader]") {
  uint64_t pos = 0, v = 0;
  auto one = B({0x96, 0x01});
  REQUIRE(wire::ReadVarint(one.data(), one.size(), pos, v));
  CHECK(v == 150);
  CHECK(pos == 2);
  auto max = B({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01});
  pos = 0;
  REQUIRE(wire::ReadVarint(max.data(), max.size(), pos, v));
  CHECK(v == ~uint64_t{0});
  auto eleven = B({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01});
  pos = 0;
  CHECK_FALSE(wire::ReadVarint(eleven.data(), eleven.size(), pos, v));
  CHECK(pos == 0);
  auto cut = B({0x80, 0x80});
  CHECK_FALSE(wire::ReadVarint(cut.data(), cut.size(), pos, v));
}

TEST_CASE("Wire reader: fields and malformed input", "[loader]") {
  // field 1 varint 5; field 2 "ab"; field 3 fixed32; field 4 fixed64.
  auto ok = B({0x08, 0x05, 0x12, 0x02, 'a', 'b', 0x1d, 1, 0, 0, 0, 0x21, 2, 0, 0, 0, 0, 0, 0, 0});
  Reader r(ok.data(), ok.size(), 100);
  Field f;
  REQUIRE(r.Next(f));
  CHECK((f.number == 1 && f.type == WireType::kVarint && f.value == 5 && f.offset == 100 && f.end_offset() == 102));
  REQUIRE(r.Next(f));
  CHECK((f.number == 2 && f.AsString() == "ab" && f.data_offset == 104 && f.end_offset() == 106));
  REQUIRE(r.Next(f));
  CHECK((f.number == 3 && f.type == WireType::kFixed32 && f.value == 1 && f.end_offset() == 111));
  REQUIRE(r.Next(f));
  CHECK((f.number == 4 && f.type == WireType::kFixed64 && f.value == 2 && f.end_offset() == 120));
  CHECK_FALSE(r.Next(f));
  CHECK_FALSE(r.failed());

  const std::pair<std::vector<uint8_t>, uint64_t> bad[] = {
      {B({0x12, 0x05, 'a'}), 1},         // length past the end
      {B({0x0b}), 0},                    // wire type 3 (start group)
      {B({0x0c}), 0},                    // wire type 4 (end group)
      {B({0x0e}), 0},                    // wire type 6
      {B({0x0f}), 0},                    // wire type 7
      {B({0x00, 0x01}), 0},              // field number 0
      {B({0x08}), 1},                    // varint missing
      {B({0x1d, 1, 2}), 1},              // fixed32 cut
      {B({0x21, 1, 2, 3, 4, 5, 6, 7}), 1},  // fixed64 cut
      {B({0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), 1},  // 2^64-1 length
  };
  for (const auto& [bytes, at] : bad) {
    Reader rb(bytes.data(), bytes.size(), 10);
    while (rb.Next(f)) {
    }
    CHECK(rb.failed());
    CHECK(rb.error_offset() == 10 + at);
  }
  std::vector<int64_t> packed;
  auto payload = B({0x03, 0x8e, 0x02, 0x7f});
  Field p;
  p.type = WireType::kLengthDelimited;
  p.data = payload.data();
  p.size = payload.size();
  CHECK(wire::ForEachVarint(p, [&](uint64_t v) { packed.push_back(static_cast<int64_t>(v)); }));
  CHECK(packed == std::vector<int64_t>{3, 270, 127});
  p.size = 2;  // cuts the second varint
  CHECK_FALSE(wire::ForEachVarint(p, [](uint64_t) {}));
}

TEST_CASE("Loader: every truncation and many corruptions of a real model fail cleanly", "[loader]") {
  auto path = testing::SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  const std::string good = ReadAll(*path);
  REQUIRE(LoadModelFromBytes(good).ok());
  for (size_t n = 0; n < good.size(); ++n) {
    auto m = LoadModelFromBytes(std::string_view(good).substr(0, n));
    INFO("prefix " << n);
    if (!m.ok()) CHECK(m.status().code() == ErrorCode::kInvalidInput);
  }
  std::mt19937 rng(7);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] = static_cast<char>(rng() & 0xff);
    auto m = LoadModelFromBytes(bad);
    if (!m.ok()) CHECK(m.status().code() == ErrorCode::kInvalidInput);
  }
}

TEST_CASE("Loader: deeply nested subgraphs are rejected, not overflowed", "[loader]") {
  // If nodes whose then_branch graph holds the next If node, 2000 levels deep, encoded by hand.
  std::string node = "\x22\x02If";  // NodeProto.op_type = "If"
  for (int depth = 0; depth < 2000; ++depth) {
    const std::string graph = LenField(1, node);  // GraphProto.node
    const std::string attr = LenField(1, "then_branch") + LenField(6, graph) + std::string("\xa0\x01\x05", 3);
    node = std::string("\x22\x02If") + LenField(5, attr);  // NodeProto.attribute
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  std::string header;
  REQUIRE(m.SerializeToString(&header));
  const std::string model = header + LenField(7, LenField(1, node));
  auto loaded = LoadModelFromBytes(model);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().message().find("node #0 is not a valid NodeProto") == 0);
}

TEST_CASE("Loader: a 64 MB float initializer is located, not read", "[loader]") {
  constexpr size_t kRawBytes = 64u << 20;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(15);
  auto* g = m.mutable_graph();
  auto* t = g->add_initializer();
  t->set_name("big");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(kRawBytes / 4));
  t->mutable_raw_data()->assign(kRawBytes, '\x5a');
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("big");
  n->add_output("y");
  g->add_output()->set_name("y");
  std::string bytes;
  REQUIRE(m.SerializeToString(&bytes));
  m.Clear();

  const auto dir = std::filesystem::temp_directory_path() / "memopt_loader_big_test";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "big.onnx").string();
  {
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  // Drop the file from the page cache where the file system allows it, so that residency after
  // the load shows what the loader touched.
  const int fd = open(file.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  auto resident_pages = [&]() {
    void* p = mmap(nullptr, bytes.size(), PROT_READ, MAP_SHARED, fd, 0);
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> vec((bytes.size() + page - 1) / page);
    size_t count = 0;
    if (p != MAP_FAILED && mincore(p, bytes.size(), vec.data()) == 0) {
      for (unsigned char c : vec) count += (c & 1);
    }
    if (p != MAP_FAILED) munmap(p, bytes.size());
    return count;
  };
  const size_t before = resident_pages();

  auto loaded = LoadModel(file);
  REQUIRE(loaded.ok());
  const Value& big = loaded->graph.value(loaded->graph.FindValue("big"));
  REQUIRE(big.initializer.has_value());
  const InitializerInfo& info = *big.initializer;
  CHECK(info.storage == InitializerInfo::Storage::kInline);
  REQUIRE(info.raw_data_offset.has_value());
  CHECK(info.raw_data_length == kRawBytes);
  CHECK(*info.raw_data_offset >= info.file_offset);
  CHECK(*info.raw_data_offset + info.raw_data_length <= info.file_offset + info.file_length);
  CHECK(info.file_offset + info.file_length <= loaded->file_size);
  CHECK(loaded->file_size == bytes.size());
  CHECK(bytes.substr(*info.raw_data_offset - 1, 1) != "\x5a");  // the length varint precedes it
  CHECK(bytes[*info.raw_data_offset] == '\x5a');
  CHECK(bytes[*info.raw_data_offset + kRawBytes - 1] == '\x5a');
  CHECK_FALSE(big.known_values.has_value());
  CHECK(ShapeToString(*big.info.shape) == "[16777216]");

  const size_t after = resident_pages();
  if (before * 4 < bytes.size() / 4096) {
    // The cache was dropped: the loader faults in the pages holding the metadata (two here: the
    // head and the tail of the file), not the 64 MB of weights (it maps with MADV_RANDOM).
    INFO("resident pages before the load " << before << ", after " << after);
    CHECK(after * 4096 < (1u << 20));
  } else {
    WARN("page cache could not be dropped here; skipped the residency check");
  }
  close(fd);
  std::filesystem::remove_all(dir);
}

}  // namespace memopt
