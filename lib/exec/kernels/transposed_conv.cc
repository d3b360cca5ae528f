#include "exec/kernels/transposed_conv.h"

#include <algorithm>

#include "exec/kernels/float_range.h"
#include "exec/kernels/kernel_util.h"

namespace memopt::math {

/// Column-matrix rows (output channel, tap) a block holds at least: its product's M. Every block
/// reads all of X's tile; a 16-bit X is converted once per block, so its blocks are larger.
constexpr int64_t kMinBlockRows = 64;
constexpr int64_t kMinBlockRowsConverted = 256;
/// A 16-bit Y's block in float holds at most this much (unless 64 rows need more planes). Fewer
/// planes per block convert X's tile more often: 1 MiB cost 20% on 32 planes of 128x128.
constexpr int64_t kYBlockBytes = int64_t{4} << 20;

template <typename C>
void TransposedConv(const Tensor& x, const C* w, const C* bias, int64_t group, const Window3& win, Tensor& y) {
  const int64_t n = x.dim(0), c = x.dim(1), m = y.dim(1);
  const int64_t cg = c / group, mg = m / group;
  const int64_t ksize = win.KernelSize();
  const int64_t isize = win.OutSize();  // X positions
  const int64_t osize = win.InSize();   // Y positions
  const int64_t rows = mg * ksize;      // column-matrix rows of a group
  const int64_t min_rows = StoredAs<C>(x) ? kMinBlockRows : kMinBlockRowsConverted;
  int64_t mb = std::max<int64_t>(1, (min_rows + ksize - 1) / ksize);
  if (!StoredAs<C>(y)) {  // a 16-bit Y's block lives in float: within kYBlockBytes, over 64 rows
    const int64_t fit = kYBlockBytes / std::max<int64_t>(1, osize * static_cast<int64_t>(sizeof(C)));
    mb = std::min(mb, std::max(fit, (kMinBlockRows + ksize - 1) / ksize));
  }
  mb = std::min(mg, mb);
  const int64_t blocks = mb > 0 ? (mg + mb - 1) / mb : 0;
  // The tile bounds the column scratch and, for 16-bit X, the converted X tile ([C/g, tile]).
  const int64_t tile = ColumnTilePositions(win, std::max(mb * ksize, StoredAs<C>(x) ? 0 : cg), sizeof(C));
  const bool in_place = StoredAs<C>(y);
  const int64_t items = n * group * blocks;
  ParallelFor(items, mb * ksize * isize * cg, [&](int64_t first, int64_t last) {
    ColumnBuffer<C> col(win.ReadsImageAsIs() ? 0 : mb * ksize * tile);
    ChunkBuffers<C> buf;
    for (int64_t item = first; item < last; ++item) {
      const int64_t blk = item % blocks, gi = item / blocks % group, img = item / blocks / group;
      const int64_t m0 = blk * mb, count = std::min(mb, mg - m0);
      const int64_t x_at = (img * c + gi * cg) * isize;
      const int64_t y_at = (img * m + gi * mg + m0) * osize;
      C* yb = WriteRange(y, y_at, count * osize, buf, 1);
      if (!in_place) std::fill(yb, yb + count * osize, C(0));
      const C* wb = w + gi * cg * rows + m0 * ksize;  // W_g as [C/g, rows]: this block's columns
      ForEachTile(win, tile, [&](PositionRange r) {
        const BlockView<C> xt = ReadBlock(x, x_at + r.begin, cg, isize, r.size(), buf, 0);  // X's [C/g, tile]
        if (win.ReadsImageAsIs()) {  // 1x1, unit strides, no pads: the column tile is Y's own tile
          GemmAmong(items, true, false, count, r.size(), cg, C(1), wb, rows, xt.data, xt.ld, C(1), yb + r.begin, osize);
          return;
        }
        GemmAmong(items, true, false, count * ksize, r.size(), cg, C(1), wb, rows, xt.data, xt.ld, C(0), col.data(),
                  r.size());
        Col2Im(col.data(), count, win, yb, r);
      });
      if (bias != nullptr) {
        for (int64_t oc = 0; oc < count; ++oc) {
          C* yp = yb + oc * osize;
          const C bval = bias[gi * mg + m0 + oc];
          for (int64_t i = 0; i < osize; ++i) yp[i] += bval;
        }
      }
      CommitRange(yb, count * osize, y, y_at);
    }
  });
}

template void TransposedConv<float>(const Tensor&, const float*, const float*, int64_t, const Window3&, Tensor&);
template void TransposedConv<double>(const Tensor&, const double*, const double*, int64_t, const Window3&, Tensor&);

}  // namespace memopt::math
