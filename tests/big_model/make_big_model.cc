// Writes a forward transformer-style MLP stack whose weights exceed 2 GB, without filling the
// disk: the weight bytes are holes of a sparse file (all zeros). Used by check_big_model.sh to
// prove that grad / scan / plan / apply never read weight bytes.
//
//   make_big_model OUT_DIR [--layers N] [--hidden H] [--ffn F] [--inline]
//
// Layer i: h = MatMul(x_i, w1_i[H, F]); g = com.microsoft.Gelu(h); o = MatMul(g, w2_i[F, H]);
// x_{i+1} = Add(x_i, o). The loss is ReduceMean(x_N) (a scalar), so `memopt grad` can differentiate
// it. Default: 20 layers, H = 2048, F = 8192: 2,684,354,560 bytes of float weights.
// External mode (default): OUT_DIR/forward.onnx + OUT_DIR/weights.bin (sparse, offsets 4 KiB
// aligned). --inline: the weights are raw_data inside OUT_DIR/forward_inline.onnx, a protobuf past
// the 2 GB limit that protobuf's own parser refuses.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace {

struct Options {
  std::string out_dir;
  int layers = 20;
  int64_t hidden = 2048;
  int64_t ffn = 8192;
  bool inline_data = false;
};

void Fail(const std::string& what) {
  std::fprintf(stderr, "make_big_model: %s\n", what.c_str());
  std::exit(1);
}

void Varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void AddValueInfo(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<std::string>& dims) {
  vi->set_name(name);
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = t->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos) {
      dim->set_dim_value(std::stoll(d));
    } else {
      dim->set_dim_param(d);
    }
  }
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::string& name,
                         const std::vector<std::string>& inputs, const std::string& output) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& in : inputs) n->add_input(in);
  n->add_output(output);
  return n;
}

struct Weight {
  std::string name;
  std::vector<int64_t> dims;
  uint64_t bytes = 0;
};

void WriteAll(int fd, const std::string& data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Fail(std::string("write failed: ") + std::strerror(errno));
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void Hole(int fd, uint64_t bytes) {
  if (::lseek(fd, static_cast<off_t>(bytes), SEEK_CUR) < 0) Fail(std::string("lseek failed: ") + std::strerror(errno));
}

int Create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail("cannot create " + path + ": " + std::strerror(errno));
  return fd;
}

void Finish(int fd, const std::string& path) {
  const off_t end = ::lseek(fd, 0, SEEK_CUR);
  if (end < 0 || ::ftruncate(fd, end) != 0 || ::close(fd) != 0) Fail("cannot finish " + path);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Fail("missing value after " + a);
      return argv[++i];
    };
    if (a == "--layers") {
      o.layers = std::atoi(next().c_str());
    } else if (a == "--hidden") {
      o.hidden = std::atoll(next().c_str());
    } else if (a == "--ffn") {
      o.ffn = std::atoll(next().c_str());
    } else if (a == "--inline") {
      o.inline_data = true;
    } else if (o.out_dir.empty() && !a.empty() && a[0] != '-') {
      o.out_dir = a;
    } else {
      Fail("usage: make_big_model OUT_DIR [--layers N] [--hidden H] [--ffn F] [--inline]");
    }
  }
  if (o.out_dir.empty() || o.layers <= 0 || o.hidden <= 0 || o.ffn <= 0) {
    Fail("usage: make_big_model OUT_DIR [--layers N] [--hidden H] [--ffn F] [--inline]");
  }

  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("make_big_model");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  op = m.add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
  onnx::GraphProto graph;
  graph.set_name("big_mlp");
  const std::string H = std::to_string(o.hidden);
  AddValueInfo(graph.add_input(), "x", {"batch", H});

  std::vector<Weight> weights;
  std::string x = "x";
  for (int i = 0; i < o.layers; ++i) {
    const std::string l = std::to_string(i);
    weights.push_back({"layer" + l + ".w1", {o.hidden, o.ffn}, static_cast<uint64_t>(o.hidden * o.ffn * 4)});
    weights.push_back({"layer" + l + ".w2", {o.ffn, o.hidden}, static_cast<uint64_t>(o.ffn * o.hidden * 4)});
    AddNode(&graph, "MatMul", "layer" + l + "/fc1", {x, "layer" + l + ".w1"}, "layer" + l + ".h");
    AddNode(&graph, "Gelu", "layer" + l + "/gelu", {"layer" + l + ".h"}, "layer" + l + ".g")
        ->set_domain("com.microsoft");
    AddNode(&graph, "MatMul", "layer" + l + "/fc2", {"layer" + l + ".g", "layer" + l + ".w2"}, "layer" + l + ".o");
    AddNode(&graph, "Add", "layer" + l + "/residual", {x, "layer" + l + ".o"}, "layer" + l + ".y");
    x = "layer" + l + ".y";
  }
  auto* mean = AddNode(&graph, "ReduceMean", "loss/mean", {x}, "loss");
  auto* keep = mean->add_attribute();
  keep->set_name("keepdims");
  keep->set_type(onnx::AttributeProto::INT);
  keep->set_i(0);
  AddValueInfo(graph.add_output(), "loss", {});

  uint64_t total = 0;
  for (const Weight& w : weights) total += w.bytes;

  if (!o.inline_data) {
    const std::string data_path = o.out_dir + "/weights.bin";
    uint64_t offset = 0;
    for (const Weight& w : weights) {
      auto* t = graph.add_initializer();
      t->set_name(w.name);
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (int64_t d : w.dims) t->add_dims(d);
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      const std::pair<const char*, std::string> entries[] = {
          {"location", "weights.bin"}, {"offset", std::to_string(offset)}, {"length", std::to_string(w.bytes)}};
      for (const auto& [k, v] : entries) {
        auto* e = t->add_external_data();
        e->set_key(k);
        e->set_value(v);
      }
      offset += (w.bytes + 4095) / 4096 * 4096;
    }
    const int fd = Create(data_path);
    Hole(fd, offset);
    Finish(fd, data_path);
    *m.mutable_graph() = graph;
    const std::string model_path = o.out_dir + "/forward.onnx";
    const int mfd = Create(model_path);
    std::string bytes;
    if (!m.SerializeToString(&bytes)) Fail("cannot serialize the model");
    WriteAll(mfd, bytes);
    Finish(mfd, model_path);
  } else {
    // Hand-assembled wire format: the graph field holds every initializer with a raw_data payload
    // left as a hole. Field numbers: ModelProto.graph = 7, GraphProto.initializer = 5,
    // TensorProto.raw_data = 9 (all length-delimited, wire type 2).
    std::string graph_head;
    if (!graph.SerializeToString(&graph_head)) Fail("cannot serialize the graph");
    std::vector<std::string> heads;
    uint64_t graph_size = graph_head.size();
    for (const Weight& w : weights) {
      onnx::TensorProto t;
      t.set_name(w.name);
      t.set_data_type(onnx::TensorProto::FLOAT);
      for (int64_t d : w.dims) t.add_dims(d);
      std::string tensor;
      if (!t.SerializeToString(&tensor)) Fail("cannot serialize " + w.name);
      tensor.push_back(0x4a);
      Varint(tensor, w.bytes);
      std::string head;
      head.push_back(0x2a);
      Varint(head, tensor.size() + w.bytes);
      head += tensor;
      graph_size += head.size() + w.bytes;
      heads.push_back(std::move(head));
    }
    std::string model_head;
    if (!m.SerializeToString(&model_head)) Fail("cannot serialize the model");
    model_head.push_back(0x3a);
    Varint(model_head, graph_size);
    const std::string model_path = o.out_dir + "/forward_inline.onnx";
    const int fd = Create(model_path);
    WriteAll(fd, model_head + graph_head);
    for (size_t i = 0; i < weights.size(); ++i) {
      WriteAll(fd, heads[i]);
      Hole(fd, weights[i].bytes);
    }
    Finish(fd, model_path);
  }
  std::printf("%s: %d layers, %zu weights, %llu bytes of weights (%s)\n", o.out_dir.c_str(), o.layers,
              weights.size(), static_cast<unsigned long long>(total), o.inline_data ? "inline" : "external, sparse");
  return 0;
}
