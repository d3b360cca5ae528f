// Helpers shared by the shape/layout/index kernels (lib/ops/{layout,index,generate}/*_cpu.cc): reading small integer
// inputs, type-agnostic element copies (any element size, strings too) and a strided copy that
// serves Transpose, Slice, Expand, Tile, Concat, Split, Pad and DepthToSpace alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/decode_inputs.h"
#include "exec/tensor.h"
#include "util/status.h"

namespace memopt::tensor_kernels {


/// A zero-filled tensor; string tensors get numel empty strings.
Tensor NewTensor(DataType dtype, std::vector<int64_t> shape);

/// Same data, new shape, without copying numeric buffers (strings are carried over).
Tensor ReshapeView(const Tensor& t, std::vector<int64_t> shape);

/// The elements of integer input `index` (int32/int64, any shape) as int64. `what` names the input
/// in the error message.
Expected<std::vector<int64_t>> ReadIntInput(const KernelContext& ctx, int index, const std::string& what);

/// The shared decodes' reader of integer inputs (decode_inputs.h) on the CPU.
IntListReader HostInts(const KernelContext& ctx);

/// Reads a scalar (or one-element) integer input.
Expected<int64_t> ReadIntScalar(const KernelContext& ctx, int index, const std::string& what);

/// Normalises `axis` for `rank`, or an error naming the attribute/input.
Expected<int64_t> CheckedAxis(const KernelContext& ctx, int64_t axis, int64_t rank, const std::string& what = "axis");

/// Copies n consecutive elements src[src_off ..] -> dst[dst_off ..] (same dtype).
void CopyElements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n);

/// Sets every element of dst to element `index` of `value` (same dtype).
void FillWithElement(Tensor& dst, const Tensor& value, int64_t index);

/// Resets n elements starting at dst_off to zero (empty strings).
void ZeroElements(Tensor& dst, int64_t dst_off, int64_t n);

/// For every index vector i over `shape`: dst[dst_off + sum i*dst_strides] = src[src_off + sum
/// i*src_strides]. Strides are in elements and may be 0 (broadcast) or negative (reversed).
/// Adjacent dims are merged; contiguous inner runs become memcpy; big copies use both threads.
void StridedCopy(const Tensor& src, int64_t src_off, const std::vector<int64_t>& src_strides, Tensor& dst,
                 int64_t dst_off, const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& shape);

/// dst (contiguous, shape = sizes of maps) gets src at coordinates maps[d][out_coord_d].
void CopyWithIndexMaps(const Tensor& src, Tensor& dst, const std::vector<std::vector<int64_t>>& maps);

/// Output 0 = input `in_shape` permuted by `perm` (a transpose of a view of `src` with that shape).
Tensor TransposeView(const Tensor& src, const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm);

/// "[1, 2, 3]"
std::string ListToString(const std::vector<int64_t>& v);

}  // namespace memopt::tensor_kernels
