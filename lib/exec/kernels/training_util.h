// Helpers shared by the training / fused-op CPU kernels (lib/ops/<family>/*_cpu.cc): float-type
// dispatch (float16/bfloat16 computed in float, float64 in
// double) and small input readers. Private to those files; general helpers live in kernel_util.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/float_range.h"
#include "exec/philox.h"
#include "exec/tensor.h"
#include "util/half.h"
#include "util/status.h"

namespace memopt::training {

inline constexpr const char* kMsDomain = "com.microsoft";

/// float, double, float16, bfloat16 (ORT's type set F4).
std::vector<DataType> FloatTypes();
bool IsFloatType(DataType t);

/// Error unless input i is present.
Status RequireInput(const KernelContext& ctx, int i, const char* what);
/// Error unless input i is present and float-typed (F4).
Status RequireFloatInput(const KernelContext& ctx, int i, const char* what);
/// Error unless inputs a and b have the same number of elements.
Status RequireSameSize(const KernelContext& ctx, int a, int b);

/// Element 0 of a numeric or bool tensor (a scalar input such as ratio or training_mode).
double ScalarAsDouble(const Tensor& t);
/// Optional scalar input i, or `def` when absent.
double OptionalScalar(const KernelContext& ctx, int i, double def);

/// Axis normalised to [0, rank) (negative counts from the end), or an error naming the node.
Expected<int64_t> AxisOrError(const KernelContext& ctx, int64_t axis, int64_t rank);
/// Product of shape[begin:end).
int64_t ShapeProduct(const std::vector<int64_t>& shape, int64_t begin, int64_t end);

/// Writes `v` into a fresh [1] (or scalar when shape is empty) bool tensor.
Tensor MakeBool(bool v, std::vector<int64_t> shape);

/// Calls fn.template operator()<C>() with C = double for float64 and float for float/float16/
/// bfloat16; an error naming the node for any other type.
template <typename Fn>
Status DispatchCompute(const KernelContext& ctx, DataType t, Fn&& fn) {
  switch (t) {
    case DataType::kDouble:
      return fn.template operator()<double>();
    case DataType::kFloat:
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return fn.template operator()<float>();
    default:
      return ctx.Error("unsupported element type " + DataTypeName(t) +
                       " (expected float, double, float16 or bfloat16)");
  }
}

/// Reads an integer index tensor (int32 or int64) into int64 values.
std::vector<int64_t> ReadIndices(const Tensor& t);

/// Seed of a Dropout-family node (exec/philox.h): the `seed` attribute when present, otherwise the
/// run seed mixed with the node's first output name (trailing "_recompute" suffixes removed, so a
/// recompute clone without a seed attribute still draws the forward mask).
uint64_t DropoutSeed(const KernelContext& ctx);
/// keep[i] = 1 when element i of an n-element tensor is kept under (seed, ratio), else 0.
void FillDropoutMask(uint64_t seed, float ratio, int64_t n, uint8_t* keep);
/// The same mask's elements [first, first + count) into keep[0, count): element i of the mask is
/// the same whichever range it is filled in.
void FillDropoutMaskRange(uint64_t seed, float ratio, int64_t first, int64_t count, uint8_t* keep);
/// Dropout ratio input i (default 0.5); an error unless 0 <= ratio <= 1.
Expected<float> ReadDropoutRatio(const KernelContext& ctx, int i);

}  // namespace memopt::training
