// Helpers private to the math kernels (matmul, gemm, conv, pool, norm, softmax, loss):
// views of floating tensors in their compute type (float for float/float16/bfloat16, double for
// double), and convolution/pooling window geometry. The kernels themselves live with their ops in
// lib/ops/<family>/*_cpu.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/float_range.h"
#include "exec/kernels/kernel_util.h"
#include "exec/tensor.h"

namespace memopt::math {

/// The floating types the math kernels accept for their main input.
inline std::vector<DataType> FloatTypes() {
  return {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16};
}

inline bool IsFloatFamily(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBfloat16;
}

/// True when output i exists and the kernel has allocated it.
inline bool HasOutput(const KernelContext& ctx, int i) {
  return i >= 0 && i < static_cast<int>(ctx.outputs.size()) && ctx.outputs[i].defined();
}

/// Status with code kUnsupported that names the node ("node 'x' (Op): unsupported data type 'int8'").
Status UnsupportedDtype(const KernelContext& ctx, DataType t, const std::string& what = "input");

/// Calls f(TypeTag<C>{}) with C = double for double tensors and float for float/float16/bfloat16;
/// other dtypes give an unsupported-type error naming the node.
template <typename F>
Status DispatchCompute(const KernelContext& ctx, DataType t, F&& f) {
  if (t == DataType::kDouble) return f(TypeTag<double>{});
  if (IsFloatFamily(t)) return f(TypeTag<float>{});
  return UnsupportedDtype(ctx, t);
}

// ---------------------------------------------------------------------------------------------
// Sliding-window geometry shared by Conv, ConvTranspose and the pools.

struct WindowGeometry {
  std::vector<int64_t> kernel;  ///< per spatial dim
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  ///< begin..., end...
  std::vector<int64_t> out;   ///< output spatial size
};

/// Reads kernel_shape (or `kernel_from_weights` when absent), strides, dilations, pads and
/// auto_pad from the node and computes the output spatial sizes of a forward window op on
/// `in` (spatial dims). ceil_mode applies the pooling rule (a last window that would start in
/// the end padding is dropped).
Expected<WindowGeometry> ForwardWindow(const KernelContext& ctx, const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& kernel_from_weights, bool ceil_mode);

/// Spatial dims padded to 3 (leading 1s) so that 1-D/2-D/3-D share one loop nest.
struct Dims3 {
  int64_t d = 1, h = 1, w = 1;
  int64_t size() const { return d * h * w; }
};

}  // namespace memopt::math
