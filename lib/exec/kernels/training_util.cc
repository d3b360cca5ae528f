#include "exec/kernels/training_util.h"

#include <algorithm>
#include <string_view>

#include "exec/dropout_seed.h"
#include "exec/kernels/kernel_util.h"
#include "exec/philox.h"

namespace memopt::training {

std::vector<DataType> FloatTypes() {
  return {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16};
}

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBfloat16;
}

Status RequireInput(const KernelContext& ctx, int i, const char* what) {
  if (!ctx.has_input(i)) return ctx.Error("missing required input " + std::to_string(i) + " (" + what + ")");
  return Status::Ok();
}

Status RequireFloatInput(const KernelContext& ctx, int i, const char* what) {
  MEMOPT_RETURN_IF_ERROR(RequireInput(ctx, i, what));
  if (!IsFloatType(ctx.input(i).dtype())) {
    return ctx.Error("input " + std::to_string(i) + " (" + what + ") has type " +
                     DataTypeName(ctx.input(i).dtype()) + "; expected float, double, float16 or bfloat16");
  }
  return Status::Ok();
}

Status RequireSameSize(const KernelContext& ctx, int a, int b) {
  if (ctx.input(a).numel() != ctx.input(b).numel()) {
    return ctx.Error("input " + std::to_string(a) + " " + ctx.input(a).Describe() + " and input " +
                     std::to_string(b) + " " + ctx.input(b).Describe() + " must have the same number of elements");
  }
  return Status::Ok();
}

double ScalarAsDouble(const Tensor& t) {
  if (t.numel() == 0) return 0.0;
  if (t.dtype() == DataType::kBool) return t.data<uint8_t>()[0] != 0 ? 1.0 : 0.0;
  return t.GetAsDouble(0);
}

double OptionalScalar(const KernelContext& ctx, int i, double def) {
  if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return def;
  return ScalarAsDouble(ctx.input(i));
}

Expected<int64_t> AxisOrError(const KernelContext& ctx, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    return ctx.Error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return a;
}

int64_t ShapeProduct(const std::vector<int64_t>& shape, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t i = begin; i < end; ++i) p *= shape[static_cast<size_t>(i)];
  return p;
}

Tensor MakeBool(bool v, std::vector<int64_t> shape) {
  Tensor t(DataType::kBool, std::move(shape));
  uint8_t* p = t.data<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = v ? 1 : 0;
  return t;
}

std::vector<int64_t> ReadIndices(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::kInt64) {
    if (!out.empty()) std::memcpy(out.data(), t.data<int64_t>(), out.size() * sizeof(int64_t));
  } else if (t.dtype() == DataType::kInt32) {
    const int32_t* p = t.data<int32_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else {
    out = t.ToInt64Vector();
  }
  return out;
}

uint64_t DropoutSeed(const KernelContext& ctx) { return NodeDropoutSeed(*ctx.node, ctx.graph, ctx.run_seed); }

void FillDropoutMaskRange(uint64_t seed, float ratio, int64_t first, int64_t count, uint8_t* keep) {
  const float keep_probability = DropoutKeepProbability(ratio);
  int64_t i = first;
  const int64_t end = first + count;
  while (i < end) {
    // Element i takes lane i % 4 of Philox block i / 4.
    const Philox4x32 r = DropoutRandomBlock(seed, static_cast<uint64_t>(i / 4));
    for (int64_t lane = i % 4; lane < 4 && i < end; ++lane, ++i) {
      keep[i - first] = PhiloxUniform(r.v[lane]) < keep_probability ? 1 : 0;
    }
  }
}

void FillDropoutMask(uint64_t seed, float ratio, int64_t n, uint8_t* keep) {
  ParallelFor((n + kChunkElements - 1) / kChunkElements, kChunkElements * 10, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t first = b * kChunkElements;
      FillDropoutMaskRange(seed, ratio, first, std::min(kChunkElements, n - first), keep + first);
    }
  });
}

Expected<float> ReadDropoutRatio(const KernelContext& ctx, int i) {
  double ratio = OptionalScalar(ctx, i, 0.5);
  if (!(ratio >= 0.0 && ratio <= 1.0)) {
    return ctx.Error("dropout ratio " + std::to_string(ratio) + " is outside [0, 1]");
  }
  return static_cast<float>(ratio);
}

}  // namespace memopt::training
