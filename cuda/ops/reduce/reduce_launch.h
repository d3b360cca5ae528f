// Launch functions of kernels/reduce.cu (no graph headers; see launch.h): the passes of the
// Reduce* ops, the plan of the chunked column reduction (shared with the normalisation
// gradients' dScale/dBias), and the variadic Sum/Mean/Max/Min.
#pragma once

#include <cstdint>
#include <vector>

#include "launch.h"

namespace memopt::cuda {

/// How the chunked column reduction of an [outer, rows, cols] problem (sum over rows) splits the
/// work: blocks of tx x ty threads (tx consecutive threads over columns, `vec` columns each, so a
/// warp reads whole rows of a column tile; ty row lanes), over a grid of col_tiles x chunks x
/// outer_blocks. With one chunk the blocks write the results; otherwise each chunk writes partial
/// results to scratch ([chunk][outer][cols]) and a second kernel folds them (ColumnFinishKernel).
/// The split depends on the shape (and `vec`) only, so results are reproducible from run to run
/// and device to device.
struct ColumnPlan {
  int64_t outer = 0, rows = 0, cols = 0;
  int64_t chunk_rows = 0;
  int64_t col_tiles = 0;
  int tx = 32, ty = 8;
  int vec = 1;  ///< columns per thread, read by one access per row (cols % vec == 0)
  int chunks = 1;
  int outer_blocks = 1;
  /// Partial results in scratch (accumulators, not bytes); 0 with one chunk.
  int64_t partials() const { return chunks > 1 ? chunks * outer * cols : 0; }
};

/// `vec` > 1 (a divisor of cols): each thread folds `vec` neighbouring columns.
inline ColumnPlan PlanColumnReduce(int64_t outer, int64_t rows, int64_t cols, int vec = 1) {
  ColumnPlan p;
  p.outer = outer;
  p.rows = rows;
  p.cols = cols;
  p.vec = vec;
  const int64_t thread_cols = cols / vec;
  // Narrow tiles for few columns keep the warp's reads contiguous across rows.
  p.tx = 1;
  while (p.tx < 32 && p.tx < thread_cols) p.tx *= 2;
  p.ty = 256 / p.tx;
  p.col_tiles = (thread_cols + p.tx - 1) / p.tx;
  p.outer_blocks = static_cast<int>(outer < 65535 ? (outer > 0 ? outer : 1) : 65535);
  const int64_t base = (p.col_tiles > 0 ? p.col_tiles : 1) * p.outer_blocks;
  // Enough blocks to fill the device, but every thread folds at least 8 rows per chunk.
  constexpr int64_t kTargetBlocks = 2048;
  int64_t chunks = kTargetBlocks / base;
  const int64_t max_chunks = rows / (8 * p.ty);
  if (chunks > max_chunks) chunks = max_chunks;
  if (chunks < 1) chunks = 1;
  p.chunk_rows = rows > 0 ? (rows + chunks - 1) / chunks : 0;
  p.chunks = rows > 0 ? static_cast<int>((rows + p.chunk_rows - 1) / p.chunk_rows) : 1;
  return p;
}

/// Columns per thread of a pass's column reduction over elements of `elem_bytes` bytes (the
/// first pass reads the input type, later ones float partials): 16 bytes' worth when the columns
/// divide into them, else 1. reduce.cu uses it when the input is 16-byte aligned too.
inline int ColumnVecFor(int64_t cols, int elem_bytes) {
  const int v = 16 / elem_bytes;
  return cols % v == 0 ? v : 1;
}

enum class ReduceKind { kSum, kMean, kSumSquare, kL2, kMax, kMin, kLogSumExp };

/// One pass of a reduction: y[o, i] = reduce over r of x[o, r, i] for an [outer, len, inner] view.
struct ReducePass {
  int64_t outer = 1, len = 1, inner = 1;
};

/// The passes reducing `shape` over the dims marked in `reduce` (host code, reduce.cc):
/// size-1 dims dropped, adjacent dims of the same kind merged, then the innermost reduced group
/// is reduced first and the remaining groups are merged again, until none is left. No reduced
/// group (nothing to reduce, or only size-1 dims) gives one pass of len 1 over all elements.
/// The shape must have elements.
std::vector<ReducePass> PlanReducePasses(const std::vector<int64_t>& shape, const std::vector<bool>& reduce);

/// Passes of at most this many elements per output run one thread per output (a warp or a
/// column tile per output would leave most lanes idle).
constexpr int64_t kPointReduceMaxLen = 16;

/// Passes with inner == 1 and at least this many outputs reduce one row per warp or block;
/// fewer rows go through the column reduction (as [outer, len, 1]), whose row chunks spread a
/// few long rows over the whole device.
constexpr int64_t kRowReduceMinRows = 1024;

/// Float scratch elements a pass needs for its partial results (0: none).
inline int64_t ReducePassScratch(const ReducePass& p) {
  if (p.len <= kPointReduceMaxLen || (p.inner == 1 && p.outer >= kRowReduceMinRows)) return 0;
  // Whichever split the pass takes (by element width and alignment): up to 2 floats per accumulator.
  int64_t most = PlanColumnReduce(p.outer, p.len, p.inner).partials();
  for (int bytes : {2, 4}) {
    const int v = ColumnVecFor(p.inner, bytes);
    if (v > 1) {
      const int64_t n = PlanColumnReduce(p.outer, p.len, p.inner, v).partials();
      if (n > most) most = n;
    }
  }
  return 2 * most;
}

/// Runs one pass. `first`: x holds the input elements (SumSquare and L2 square them), else the
/// float results of the previous pass; `last`: y receives the result (Mean divides by `count`,
/// the total number of reduced elements; L2 takes the root), else float partial results of the
/// same kind (sums, extremes, log-sum-exps). Types: in/out equal, or one of them kF32, from
/// kF32/kF16/kBF16. `scratch`: ReducePassScratch(p) floats.
cudaError_t LaunchReducePass(ReduceKind kind, ElemType in_type, ElemType out_type, const void* x, void* y,
                             const ReducePass& p, bool first, bool last, int64_t count, float* scratch,
                             cudaStream_t stream);

/// Broadcast reads of up to kMaxVariadicInputs inputs at each output element: dims of size 1
/// dropped and adjacent dims merged where every input allows, per input its strides (0 where
/// broadcast).
constexpr int kMaxVariadicInputs = 8;
struct VariadicArgs {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int count = 0;
  const void* inputs[kMaxVariadicInputs] = {};
  int64_t strides[kMaxVariadicInputs][kMaxRank] = {};
};

enum class VariadicOp { kSum, kMax, kMin };

/// y = op(...op(op(in0, in1), in2)..., in_{count-1}), rounded to the element type after every
/// step as the CPU's chain of binary folds; with `fold_into_y`, y's current values come first
/// (the continuation of a list longer than kMaxVariadicInputs). divisor > 0 divides the result
/// (Mean). Types: kF32, kF16, kBF16.
cudaError_t LaunchVariadic(VariadicOp op, ElemType t, const VariadicArgs& a, bool fold_into_y, float divisor,
                           void* y, int64_t n, cudaStream_t stream);

}  // namespace memopt::cuda
