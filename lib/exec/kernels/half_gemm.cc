#include "exec/kernels/half_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "exec/kernels/kernel_util.h"
#include "exec/math/half_rows.h"

namespace memopt::math {
namespace {

blasint B(int64_t v) { return static_cast<blasint>(v); }

/// rows x cols of a stored 16-bit matrix (row stride ld) into a dense float block (stride cols).
void ConvertBlock(DataType dtype, const uint16_t* src, int64_t ld, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    if (dtype == DataType::kFloat16) {
      HalfToFloatArray(src + r * ld, dst + r * cols, cols);
    } else {
      Bfloat16ToFloatArray(src + r * ld, dst + r * cols, cols);
    }
  }
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t HalfTileEdge(int64_t m, int64_t n, int64_t count) {
  int64_t t = kHalfTile;
  while (t > 64 && count * CeilDiv(m, t) * CeilDiv(n, t) < 8) t /= 2;
  return t;
}

void HalfBatchedGemm(DataType dtype, int64_t m, int64_t n, int64_t k, float alpha, const HalfOperand& a,
                     const HalfOperand& b, int64_t count, uint16_t* y, const HalfTileInit& init) {
  if (count == 0 || m == 0 || n == 0) return;
  const int64_t edge = HalfTileEdge(m, n, count);
  const int64_t tiles_m = CeilDiv(m, edge), tiles_n = CeilDiv(n, edge);
  const int64_t tiles = count * tiles_m * tiles_n;
  const int64_t depth = std::min(k, kHalfDepth);
  ParallelFor(tiles, edge * edge * std::max<int64_t>(k, 1), [&](int64_t begin, int64_t end) {
    std::vector<float> ab(static_cast<size_t>(edge * depth)), bb(static_cast<size_t>(depth * edge));
    std::vector<float> tile(static_cast<size_t>(edge * edge));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t e = t / (tiles_m * tiles_n);
      const int64_t i0 = (t / tiles_n) % tiles_m * edge, j0 = t % tiles_n * edge;
      const int64_t rows = std::min(edge, m - i0), cols = std::min(edge, n - j0);
      const uint16_t* ae = a.data + a.offsets[e];
      const uint16_t* be = b.data + b.offsets[e];
      if (init) {
        init(i0, j0, rows, cols, tile.data(), cols);
      } else if (k == 0) {
        std::fill(tile.begin(), tile.begin() + rows * cols, 0.0f);
      }
      for (int64_t k0 = 0; k0 < k; k0 += depth) {
        const int64_t kb = std::min(depth, k - k0);
        // Blocks as stored: A [rows, kb] (or [kb, rows] transposed), B [kb, cols] (or [cols, kb]).
        if (a.trans) {
          ConvertBlock(dtype, ae + k0 * a.ld + i0, a.ld, kb, rows, ab.data());
        } else {
          ConvertBlock(dtype, ae + i0 * a.ld + k0, a.ld, rows, kb, ab.data());
        }
        if (b.trans) {
          ConvertBlock(dtype, be + j0 * b.ld + k0, b.ld, cols, kb, bb.data());
        } else {
          ConvertBlock(dtype, be + k0 * b.ld + j0, b.ld, kb, cols, bb.data());
        }
        const float beta = (k0 == 0 && !init) ? 0.0f : 1.0f;
        cblas_sgemm(CblasRowMajor, a.trans ? CblasTrans : CblasNoTrans, b.trans ? CblasTrans : CblasNoTrans, B(rows),
                    B(cols), B(kb), alpha, ab.data(), B(a.trans ? rows : kb), bb.data(), B(b.trans ? kb : cols), beta,
                    tile.data(), B(cols));
      }
      uint16_t* ye = y + e * m * n;
      for (int64_t r = 0; r < rows; ++r) {
        uint16_t* dst = ye + (i0 + r) * n + j0;
        if (dtype == DataType::kFloat16) {
          FloatToHalfArray(tile.data() + r * cols, dst, cols);
        } else {
          FloatToBfloat16Array(tile.data() + r * cols, dst, cols);
        }
      }
    }
  });
}

}  // namespace memopt::math
