// memopt_kernel_bench: the achieved memory bandwidth of the CUDA kernels on transformer-sized
// tensors (GPT-2 small at batch 8, seq 1024), against the device's measured copy bandwidth.
// Each case builds one node, uploads random non-zero inputs (several copies when they would fit in
// the L2 cache, used in turn, so that the timings read device memory), runs the registered kernel
// once (warmup, and to catch errors), then times `iters` launches with CUDA events. Bytes moved
// are every input read once plus every output written once: the floor a kernel can reach, so the
// percentages say how close to streaming speed it runs, against a large copy and against a copy
// of the same bytes. Ops without a kernel are listed as such.
// Usage: memopt_kernel_bench [--iters N] [--scale F]   (scale < 1 shrinks every tensor)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cuda_kernel.h"
#include "device.h"
#include "device_tensor.h"
#include "exec/tensor.h"

namespace memopt::cuda {
namespace {

struct Case {
  std::string label;
  std::string domain, op;
  std::vector<Tensor> inputs;
  int outputs = 1;
  std::vector<std::pair<std::string, int64_t>> ints;
  std::vector<std::pair<std::string, float>> floats;
  std::vector<std::pair<std::string, std::vector<int64_t>>> lists;
};

Tensor Random(DataType dtype, std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> mag(0.25f, 2.0f);
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.SetFromDouble(i, (gen() & 1) ? mag(gen) : -mag(gen));
  return t;
}

Tensor Int64s(std::vector<int64_t> shape, int64_t modulo, uint32_t seed) {
  std::mt19937 gen(seed);
  Tensor t(DataType::kInt64, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = static_cast<int64_t>(gen() % modulo);
  return t;
}

Tensor Scalar(DataType dtype, double v) {
  Tensor t(dtype, {});
  t.SetFromDouble(0, v);
  return t;
}

Node MakeNode(const Case& c) {
  Node node;
  node.domain = c.domain;
  node.op_type = c.op;
  node.name = c.label;
  node.since_version = 17;
  node.proto.set_op_type(c.op);
  node.proto.set_domain(c.domain);
  for (const auto& [name, v] : c.ints) {
    auto* a = node.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  for (const auto& [name, v] : c.floats) {
    auto* a = node.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  for (const auto& [name, v] : c.lists) {
    auto* a = node.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  for (int i = 0; i < c.outputs; ++i) node.outputs.push_back(i);
  return node;
}

struct Timing {
  double ms = 0;
  int64_t bytes = 0;
};

class Events {
 public:
  Events() {
    cudaEventCreate(&a_);
    cudaEventCreate(&b_);
  }
  ~Events() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  void Start(cudaStream_t s) { cudaEventRecord(a_, s); }
  double StopMs(cudaStream_t s) {
    cudaEventRecord(b_, s);
    cudaEventSynchronize(b_);
    float ms = 0;
    cudaEventElapsedTime(&ms, a_, b_);
    return ms;
  }

 private:
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

/// Input sets to rotate through so that a case's inputs, all sets together, are at least three
/// times the L2 cache: repeated launches then read device memory, not the cache (at most 8 sets).
int SetsFor(int64_t input_bytes) {
  int device = 0, l2 = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) != cudaSuccess) {
    l2 = 64 << 20;
  }
  const int64_t want = 3 * static_cast<int64_t>(l2);
  const int64_t sets = input_bytes > 0 ? (want + input_bytes - 1) / input_bytes : 1;
  return static_cast<int>(std::clamp<int64_t>(sets, 1, 8));
}

Expected<Timing> TimeCase(const Case& c, const std::shared_ptr<DevicePool>& pool, cublasHandle_t cublas, int iters,
                          int* sets_used) {
  const CudaKernelFn fn = CudaKernelRegistry::Builtin().Find(c.domain, c.op);
  if (fn == nullptr) return Unsupported("no CUDA kernel");
  const Node node = MakeNode(c);
  int64_t input_bytes = 0;
  for (const Tensor& host : c.inputs) input_bytes += host.bytes();
  const int nsets = SetsFor(input_bytes);
  *sets_used = nsets;
  // Set k holds the same values (uploads of the same host tensors) at other addresses.
  std::vector<std::vector<DeviceTensor>> sets(nsets);
  for (auto& set : sets) {
    for (const Tensor& host : c.inputs) {
      MEMOPT_ASSIGN_OR_RETURN(DeviceTensor d, DeviceTensor::Upload(pool, host));
      set.push_back(std::move(d));
    }
  }
  Timing t;
  t.bytes = input_bytes;
  CudaKernelContext ctx;
  ctx.node = &node;
  ctx.pool = pool;
  ctx.cublas = cublas;
  auto run_once = [&](int k) -> Status {
    ctx.inputs.clear();
    for (const auto& d : sets[k % nsets]) ctx.inputs.push_back(&d);
    ctx.outputs.assign(node.outputs.size(), DeviceTensor());
    return fn(ctx);
  };
  MEMOPT_RETURN_IF_ERROR(run_once(0));
  MEMOPT_RETURN_IF_ERROR(pool->Synchronize());
  for (const auto& o : ctx.outputs) t.bytes += o.bytes();
  Events ev;
  ev.Start(pool->stream());
  for (int i = 0; i < iters; ++i) MEMOPT_RETURN_IF_ERROR(run_once(i + 1));
  t.ms = ev.StopMs(pool->stream()) / iters;
  MEMOPT_RETURN_IF_ERROR(pool->Synchronize());
  return t;
}

/// Device-to-device copies of `bytes` (2 x bytes moved: each byte read and written once), from
/// `nsets` sources in turn as TimeCase rotates its inputs.
Expected<Timing> TimeCopy(const std::shared_ptr<DevicePool>& pool, int64_t bytes, int iters, int nsets = 1) {
  const int64_t floats = std::max<int64_t>(1, bytes / 4);
  std::vector<DeviceTensor> srcs;
  for (int k = 0; k < nsets; ++k) {
    MEMOPT_ASSIGN_OR_RETURN(DeviceTensor src, DeviceTensor::Upload(pool, Random(DataType::kFloat, {floats}, 1 + k)));
    srcs.push_back(std::move(src));
  }
  MEMOPT_ASSIGN_OR_RETURN(DeviceTensor dst, DeviceTensor::Empty(pool, DataType::kFloat, {floats}));
  const auto copy = [&](int k) {
    return cudaMemcpyAsync(dst.raw(), srcs[k % nsets].raw(), static_cast<size_t>(dst.bytes()), cudaMemcpyDeviceToDevice,
                           pool->stream());
  };
  if (copy(0) != cudaSuccess) return InternalError("cudaMemcpyAsync failed");
  Events ev;
  ev.Start(pool->stream());
  for (int i = 0; i < iters; ++i) {
    if (copy(i + 1) != cudaSuccess) return InternalError("cudaMemcpyAsync failed");
  }
  Timing t;
  t.ms = ev.StopMs(pool->stream()) / iters;
  t.bytes = 2 * dst.bytes();
  MEMOPT_RETURN_IF_ERROR(pool->Synchronize());
  return t;
}

std::vector<Case> Cases(double scale) {
  const DataType h = DataType::kFloat16;
  auto n = [scale](int64_t v) { return std::max<int64_t>(1, static_cast<int64_t>(v * scale)); };
  const int64_t tokens = n(8 * 1024), hidden = 768, ffn = 3072, heads_rows = n(8 * 12 * 1024), vocab = 50257;
  std::vector<Case> cases;
  // Positional fields, defaults for the rest: label, domain, op, inputs, outputs, ints, floats.
  auto add = [&cases](std::string label, std::string domain, std::string op, std::vector<Tensor> inputs,
                      int outputs = 1, std::vector<std::pair<std::string, int64_t>> ints = {},
                      std::vector<std::pair<std::string, float>> floats = {},
                      std::vector<std::pair<std::string, std::vector<int64_t>>> lists = {}) {
    cases.push_back(Case{std::move(label), std::move(domain), std::move(op), std::move(inputs), outputs,
                         std::move(ints), std::move(floats), std::move(lists)});
  };
  add("Add f16 [tokens, 3072]", "", "Add", {Random(h, {tokens, ffn}, 1), Random(h, {tokens, ffn}, 2)});
  add("Add f16 + bias [3072]", "", "Add", {Random(h, {tokens, ffn}, 1), Random(h, {ffn}, 2)});
  add("Add f32 [tokens, 3072]", "", "Add",
      {Random(DataType::kFloat, {tokens, ffn}, 1), Random(DataType::kFloat, {tokens, ffn}, 2)});
  add("BiasGelu f16", "com.microsoft", "BiasGelu", {Random(h, {tokens, ffn}, 3), Random(h, {ffn}, 4)});
  add("FastGelu f16", "com.microsoft", "FastGelu", {Random(h, {tokens, ffn}, 3)});
  add("BiasGeluGrad_dX f16", "com.microsoft", "BiasGeluGrad_dX",
      {Random(h, {tokens, ffn}, 5), Random(h, {tokens, ffn}, 3), Random(h, {ffn}, 4)});
  add("Cast f32 -> f16", "", "Cast", {Random(DataType::kFloat, {tokens, ffn}, 6)}, 1, {{"to", 10}});
  add("Dropout f16 ratio 0.1", "", "Dropout", {Random(h, {tokens, ffn}, 7), Scalar(h, 0.1), Scalar(DataType::kBool, 1)},
      2, {{"seed", 42}});
  add("BitmaskDropout f16", "com.microsoft", "BitmaskDropout",
      {Random(h, {tokens, ffn}, 7), Scalar(h, 0.1), Scalar(DataType::kBool, 1)}, 2, {{"seed", 42}});
  add("Softmax f16 [8*12*1024, 1024]", "", "Softmax", {Random(h, {heads_rows, 1024}, 8)});
  add("SoftmaxGrad_13 f16", "com.microsoft", "SoftmaxGrad_13",
      {Random(h, {heads_rows, 1024}, 9), Random(h, {heads_rows, 1024}, 8)});
  add("LayerNormalization f16 [tokens, 768]", "", "LayerNormalization",
      {Random(h, {tokens, hidden}, 10), Random(h, {hidden}, 11), Random(h, {hidden}, 12)}, 3, {{"axis", -1}},
      {{"epsilon", 1e-5f}});
  add("Transpose f16 [8,1024,12,64] -> [8,12,1024,64]", "", "Transpose", {Random(h, {n(8), 1024, 12, 64}, 13)}, 1, {},
      {}, {{"perm", {0, 2, 1, 3}}});
  add("ReduceSum f16 [tokens, 768] over tokens", "", "ReduceSum", {Random(h, {tokens, hidden}, 14), Int64s({1}, 1, 0)},
      1, {{"keepdims", 0}});
  add("SoftmaxCrossEntropyLossInternal f16 [tokens, 50257]", "com.microsoft", "SoftmaxCrossEntropyLossInternal",
      {Random(h, {tokens, vocab}, 15), Int64s({tokens}, vocab, 16)}, 2, {}, {});
  return cases;
}

int Main(int argc, char** argv) {
  int iters = 20;
  double scale = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
      scale = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: memopt_kernel_bench [--iters N] [--scale F]\n");
      return 2;
    }
  }
  auto device = ProbeDevice(0);
  if (!device.ok()) {
    std::fprintf(stderr, "memopt_kernel_bench: %s\n", device.status().message().c_str());
    return 4;
  }
  auto pool = DevicePool::Create();
  if (!pool.ok()) {
    std::fprintf(stderr, "memopt_kernel_bench: %s\n", pool.status().message().c_str());
    return 4;
  }
  auto cublas = CreateCublas((*pool)->stream());
  if (!cublas.ok()) {
    std::fprintf(stderr, "memopt_kernel_bench: %s\n", cublas.status().message().c_str());
    return 1;
  }
  std::printf("device: %s\n", Describe(*device).c_str());
  auto copy = TimeCopy(*pool, static_cast<int64_t>(256.0 * 1024 * 1024 * std::min(1.0, scale)), iters);
  if (!copy.ok()) {
    std::fprintf(stderr, "memopt_kernel_bench: copy: %s\n", copy.status().message().c_str());
    return 1;
  }
  const double copy_gbs = copy->bytes / (copy->ms * 1e6);
  // "% copy": against the large copy above; "% same copy": against a copy moving the case's bytes
  // (half read, half written) from as many rotating sources, which carries the same launch and
  // tail costs a kernel of that size cannot avoid.
  std::printf("%-52s %10s %12s %10s %8s %12s %5s\n", "kernel", "MB moved", "time (us)", "GB/s", "% copy",
              "% same copy", "sets");
  std::printf("%-52s %10.1f %12.1f %10.1f %8s %12s %5s\n", "cudaMemcpy D2D (reference)", copy->bytes / 1e6,
              copy->ms * 1e3, copy_gbs, "100.0", "-", "1");
  int failures = 0;
  for (const Case& c : Cases(scale)) {
    int sets = 1;
    auto t = TimeCase(c, *pool, cublas->get(), iters, &sets);
    if (!t.ok()) {
      std::printf("%-52s %s\n", c.label.c_str(), t.status().message().c_str());
      ++failures;
      (*pool)->ReleaseCached();
      continue;
    }
    (*pool)->ReleaseCached();
    auto same = TimeCopy(*pool, t->bytes / 2, iters, sets);
    if (!same.ok()) {
      std::printf("%-52s copy: %s\n", c.label.c_str(), same.status().message().c_str());
      ++failures;
      (*pool)->ReleaseCached();
      continue;
    }
    const double gbs = t->bytes / (t->ms * 1e6);
    const double same_gbs = same->bytes / (same->ms * 1e6);
    std::printf("%-52s %10.1f %12.1f %10.1f %8.1f %12.1f %5d\n", c.label.c_str(), t->bytes / 1e6, t->ms * 1e3, gbs,
                100.0 * gbs / copy_gbs, 100.0 * gbs / same_gbs, sets);
    (*pool)->ReleaseCached();
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace memopt::cuda

int main(int argc, char** argv) { return memopt::cuda::Main(argc, argv); }
