// Launch functions of data_movement.cu (no graph headers; see launch.h). The copies are
// type-agnostic: they move elements of 1, 2, 4, 8 or 16 bytes without looking at them.
#pragma once

#include <cstdint>

#include "launch.h"

#if defined(__CUDACC__)
#define MEMOPT_DM_HD __host__ __device__ __forceinline__
#else
#define MEMOPT_DM_HD inline
#endif

namespace memopt::cuda {

/// Division of a numerator below 2^31 by a fixed divisor in [1, 2^31) without a divide
/// instruction (the index decompositions of the copy kernels do one per dim and element):
/// q = (umulhi(n, mul) + n) >> shift, with mul + 2^32 = floor(2^(32+shift) / d) + 1 and
/// shift = ceil(log2 d). The error term n * 2^-(32+shift) stays below 1/d for n < 2^31, so q is
/// exact, and umulhi(n, mul) + n < 2^32 cannot overflow.
struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t mul = 1;
  uint32_t shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint32_t d) : divisor(d) {
    while ((uint64_t{1} << shift) < d) ++shift;
    mul = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  MEMOPT_DM_HD uint32_t Div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, mul);
#else
    const auto hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * mul) >> 32);
#endif
    return (hi + n) >> shift;
  }
};

/// Index arithmetic of the copy kernels fits 32 bits (FastDivmod) below this many elements.
constexpr int64_t kMaxFastIndex = (int64_t{1} << 31) - 1;

/// Testing: the kernels below use their 64-bit index arithmetic, the path of tensors of 2^31
/// elements or more, even for small tensors.
void SetWideIndexForTesting(bool on);

/// The iteration of a strided copy: for every coordinate c over `dims`,
/// dst[sum_d c_d * dst_strides_d] = src[sum_d c_d * src_strides_d] (strides in elements; 0 reads
/// a broadcast element, negative ones walk backwards). The wrappers drop dims of size 1 and
/// merge dims that are contiguous in both operands before filling it.
struct StridedCopyShape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t src_strides[kMaxRank] = {};
  int64_t dst_strides[kMaxRank] = {};
};

/// The copy above with elements of `elem_size` bytes (1, 2, 4, 8 or 16), src and dst starting at
/// element offsets src_off and dst_off. Contiguous copies become cudaMemcpyAsync; contiguous
/// inner runs move as 16-byte words where alignment allows; a swap of the two fastest dims uses
/// a shared-memory tiled transpose.
cudaError_t LaunchStridedCopy(int elem_size, const void* src, int64_t src_off, void* dst, int64_t dst_off,
                              StridedCopyShape shape, cudaStream_t stream);

/// Where's three-way broadcast into a contiguous output: per output dim (size-1 dims dropped,
/// contiguous ones merged), each input's stride in elements.
struct WhereShape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t cond_strides[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  int64_t y_strides[kMaxRank] = {};
};

/// out[i] = cond[.] ? x[.] : y[.] over n output elements; cond holds bools (one byte, 0/1);
/// x, y and out have elements of `elem_size` bytes (1, 2, 4, 8 or 16).
cudaError_t LaunchWhere(int elem_size, const void* cond, const void* x, const void* y, void* out, int64_t n,
                        const WhereShape& shape, cudaStream_t stream);

/// Gather: out[o, j, k] = data[o, idx[j], k] with data [outer, dim, inner] and out
/// [outer, nidx, inner]; idx int32 (idx64 false) or int64, negative entries counting from the
/// end. An index outside [-dim, dim) yields zeros instead of reading out of bounds (the wrapper
/// reports it like the CPU where it can see the indices on the host).
cudaError_t LaunchGather(int elem_size, const void* data, const void* indices, bool idx64, void* out, int64_t outer,
                         int64_t dim, int64_t nidx, int64_t inner, cudaStream_t stream);

/// GatherGrad: dx [pre, dim, post] = 0, then dx[p, idx[j], k] += dy[p, j, k] for dy [pre, q, post]
/// (float32/float16/bfloat16 `t`). Sums go through the float buffer `acc` of pre*dim*post
/// elements (atomicAdd), which must be dx itself for float32; other types are rounded from it
/// into dx at the end. Out-of-range indices add nothing.
cudaError_t LaunchGatherGrad(ElemType t, const void* dy, const void* indices, bool idx64, float* acc, void* dx,
                             int64_t pre, int64_t dim, int64_t q, int64_t post, cudaStream_t stream);

}  // namespace memopt::cuda

#if !defined(__CUDACC__)
// Host helpers shared by the wrappers of data_movement.cc (which defines them) and gather.cc.
// They need the graph headers, which nvcc is kept away from.
#include <string>
#include <vector>

#include "cuda_kernel.h"

namespace memopt::cuda::dm {

/// Unsupported unless the elements are 1, 2, 4, 8 or 16 bytes (not strings).
Status RequireCopyable(const CudaKernelContext& ctx, DataType t);
/// The values of small integer input `i` (shape, starts, split, ...), read on the host.
Expected<std::vector<int64_t>> ReadInts(const CudaKernelContext& ctx, int i, const std::string& what);
/// An int64/int32 shape input, checked non-negative (GatherGrad, SliceGrad).
Expected<std::vector<int64_t>> ReadShape(const CudaKernelContext& ctx, int i, const char* what);
/// `axis` in [-rank, rank) mapped to [0, rank), else the CPU's error message.
Expected<int64_t> CheckedAxis(const CudaKernelContext& ctx, int64_t axis, int64_t rank,
                              const std::string& what = "axis");
/// Product of s[begin, end).
int64_t ProductOf(const std::vector<int64_t>& s, int64_t begin, int64_t end);
/// Strides of `in` read at each dim of `out` (numpy broadcasting: 0 on broadcast or absent dims).
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out);
/// Drops the dims of size 1 and merges a dim into its outer neighbour wherever every operand
/// walks the pair as one run (outer stride = inner stride * inner size). strides[k] is operand
/// k's stride per dim. False when more than kMaxRank dims remain.
bool Collapse(std::vector<int64_t>& dims, std::vector<std::vector<int64_t>>& strides);
/// The Unsupported error for a layout Collapse could not bring down to kMaxRank dims.
Status TooManyDims(const CudaKernelContext& ctx);

}  // namespace memopt::cuda::dm
#endif
