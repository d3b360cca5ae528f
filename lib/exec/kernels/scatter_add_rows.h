// The scatter-add of rows that GatherGrad and ATen embedding_backward share: out[p, r, :] is the
// sum, in source order, of scale(r) * src[p, j, :] over the sources j whose index is r. A counting
// sort groups the sources by target row and the target rows run in parallel, each summed in the
// compute type C: in place for C tensors, else in a row buffer rounded into `out` once
// (exec/kernels/float_range.h), so a 16-bit table is never copied to float whole. Rows no index
// names, and rows `skip` names, keep what `out` holds (zeros).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "exec/kernels/float_range.h"
#include "exec/tensor.h"

namespace memopt {

/// `index` has q entries in [0, dim); src is [pre, q, post] and out [pre, dim, post] elements.
/// scale(r, sources) is the factor of row r's sources (sources: how many there are).
template <typename C, typename Scale>
void ScatterAddRows(const Tensor& src, const std::vector<int64_t>& index, int64_t pre, int64_t dim, int64_t post,
                    Tensor& out, int64_t skip, Scale&& scale) {
  const int64_t q = static_cast<int64_t>(index.size());
  std::vector<int64_t> first(static_cast<size_t>(dim + 1), 0), sources(static_cast<size_t>(q));
  for (int64_t k : index) ++first[static_cast<size_t>(k + 1)];
  for (int64_t r = 0; r < dim; ++r) first[static_cast<size_t>(r + 1)] += first[static_cast<size_t>(r)];
  {
    std::vector<int64_t> next(first.begin(), first.end() - 1);
    for (int64_t j = 0; j < q; ++j) sources[static_cast<size_t>(next[static_cast<size_t>(index[j])]++)] = j;
  }
  const bool direct = StoredAs<C>(out);
  const size_t row = static_cast<size_t>(post);
  ParallelFor(pre * dim, post * std::max<int64_t>(1, q / std::max<int64_t>(dim, 1)), [&](int64_t begin, int64_t end) {
    ChunkBuffers<C> buf;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t p = t / dim, r = t % dim;
      const int64_t s0 = first[static_cast<size_t>(r)], s1 = first[static_cast<size_t>(r + 1)];
      if (s0 == s1 || r == skip) continue;
      const C factor = scale(r, s1 - s0);
      C* dst = WriteRange(out, t * post, row, buf, 0);
      if (!direct) std::fill(dst, dst + post, C(0));
      for (int64_t s = s0; s < s1; ++s) {
        const C* from = ReadRange(src, (p * q + sources[static_cast<size_t>(s)]) * post, post, buf, 1);
        for (int64_t k = 0; k < post; ++k) dst[k] += from[k] * factor;
      }
      CommitRange(dst, post, out, t * post);
    }
  });
}

}  // namespace memopt
