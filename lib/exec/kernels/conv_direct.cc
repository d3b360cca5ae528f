#include "exec/kernels/conv_direct.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "exec/kernels/kernel_util.h"

// The register tiles use GCC's vector extensions: the per-ISA entry points carry target
// attributes and the always-inline tile compiles inside each with that ISA's vectors. This file
// is built with -ffp-contract=fast so `acc += w * x` is one FMA.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define MEMOPT_DIRECT_CONV 1
#else
#define MEMOPT_DIRECT_CONV 0
#endif

namespace memopt::math {
namespace {

#if MEMOPT_DIRECT_CONV

/// One group's geometry: channels in (cg) and out (mg), window, begin pads, image and output
/// sizes, and the zero-bordered plane each input channel is copied into.
struct Plan {
  int64_t cg = 0, mg = 0, kh = 0, kw = 0, pt = 0, pl = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t segs = 0;    ///< vectors per output row
  int64_t hp = 0, wp = 0;  ///< padded plane: out_h + kh - 1 rows of segs * V + kw - 1 columns
  std::vector<int64_t> tap;      ///< per k = (c, kh, kw): its offset in the padded planes
  std::vector<int64_t> in_off;   ///< per output vector (row, segment): its first tap's offset in a plane
  std::vector<int64_t> out_off;  ///< ... its offset in an output plane
  std::vector<int64_t> lanes;    ///< ... its outputs inside the row (V, or fewer at the row's end)
  int64_t K() const { return cg * kh * kw; }
  int64_t Plane() const { return hp * wp; }
};

/// padded(c, r, col) = x(c, r - pt, col - pl) inside the image, else 0, for `channels` planes.
void PadImage(const float* x, const Plan& p, int64_t channels, float* xp) {
  const int64_t lo = std::min(p.pl, p.wp);                     // columns left of the image
  const int64_t n = std::clamp<int64_t>(p.wp - lo, 0, p.in_w);  // image columns inside the plane
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t r = 0; r < p.hp; ++r) {
      float* d = xp + c * p.Plane() + r * p.wp;
      const int64_t ih = r - p.pt;
      if (ih < 0 || ih >= p.in_h) {
        std::fill(d, d + p.wp, 0.0f);
        continue;
      }
      const float* s = x + (c * p.in_h + ih) * p.in_w;
      std::fill(d, d + lo, 0.0f);
      std::copy(s, s + n, d + lo);
      std::fill(d + lo + n, d + p.wp, 0.0f);
    }
  }
}

/// wt[(g * blocks + b) * K * mr + k * mr + i] = W[g * mg + b * mr + i][k], zero past mg.
std::vector<float> PackWeights(const float* weights, const Plan& p, int64_t group, int64_t mr) {
  const int64_t blocks = (p.mg + mr - 1) / mr, k_total = p.K();
  std::vector<float> wt(static_cast<size_t>(group * blocks * k_total * mr), 0.0f);
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t b = 0; b < blocks; ++b) {
      float* block = wt.data() + (g * blocks + b) * k_total * mr;
      for (int64_t i = 0; i < mr && b * mr + i < p.mg; ++i) {
        const float* row = weights + (g * p.mg + b * mr + i) * k_total;
        for (int64_t k = 0; k < k_total; ++k) block[k * mr + i] = row[k];
      }
    }
  }
  return wt;
}

/// V floats as one vector (the attribute is spelled per width: on a dependent alias GCC drops it).
template <int V>
struct VecOf;
template <>
struct VecOf<16> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct VecOf<8> {
  typedef float type __attribute__((vector_size(32)));
};

/// MR output channels by NR output vectors (positions first .. first + npos - 1 in row-major
/// (row, segment) order; the rest repeat the last) accumulated over k = (c, kh, kw), then stored
/// to y: the block's first channel, [mr_valid, out_h, out_w].
template <int V, int MR, int NR>
[[gnu::always_inline]] inline void ConvTile(const float* xp, const float* wt, const float* bias, const Plan& p,
                                            int64_t first, int64_t npos, int64_t mr_valid, float* y) {
  using Vec = typename VecOf<V>::type;
  Vec acc[MR][NR];
  for (int i = 0; i < MR; ++i) {
    const float b0 = bias != nullptr && i < mr_valid ? bias[i] : 0.0f;
    for (int j = 0; j < NR; ++j) acc[i][j] = Vec{} + b0;
  }
  int64_t off[NR];
  for (int j = 0; j < NR; ++j) off[j] = p.in_off[static_cast<size_t>(first + (j < npos ? j : npos - 1))];
  const int64_t* tap = p.tap.data();
  for (int64_t k = 0; k < p.K(); ++k) {
    const float* at = xp + tap[k];
    const float* wk = wt + k * MR;
    Vec xv[NR];
    for (int j = 0; j < NR; ++j) std::memcpy(&xv[j], at + off[j], sizeof(Vec));
    for (int i = 0; i < MR; ++i) {
      const float wi = wk[i];  // scalar times vector: a broadcast operand of the FMA
      for (int j = 0; j < NR; ++j) acc[i][j] += wi * xv[j];
    }
  }
  const int64_t plane = p.out_h * p.out_w;
  for (int j = 0; j < npos; ++j) {
    const auto at = static_cast<size_t>(first + j);
    float* d = y + p.out_off[at];
    if (p.lanes[at] == V) {  // a whole vector: one store
      for (int64_t i = 0; i < mr_valid; ++i) std::memcpy(d + i * plane, &acc[i][j], sizeof(Vec));
    } else {
      for (int64_t i = 0; i < mr_valid; ++i) {
        std::memcpy(d + i * plane, &acc[i][j], static_cast<size_t>(p.lanes[at]) * sizeof(float));
      }
    }
  }
}

/// Blocks [b0, b1) of one group of one image: xp its padded planes, wt the group's packed
/// weights, bias the group's (or null), y the group's first output channel.
template <int V, int MR, int NR>
[[gnu::always_inline]] inline void ConvBlocks(const float* xp, const float* wt, const float* bias, const Plan& p,
                                              int64_t b0, int64_t b1, float* y) {
  const int64_t positions = p.out_h * p.segs;
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t mr_valid = std::min<int64_t>(MR, p.mg - b * MR);
    for (int64_t first = 0; first < positions; first += NR) {
      ConvTile<V, MR, NR>(xp, wt + b * p.K() * MR, bias != nullptr ? bias + b * MR : nullptr, p, first,
                          std::min<int64_t>(NR, positions - first), mr_valid, y + b * MR * p.out_h * p.out_w);
    }
  }
}

constexpr int kMrAvx512 = 8, kMrAvx2 = 6;

__attribute__((target("avx512f,avx2,fma"))) void ConvBlocksAvx512(const float* xp, const float* wt,
                                                                 const float* bias, const Plan& p, int64_t b0,
                                                                 int64_t b1, float* y) {
  ConvBlocks<16, kMrAvx512, 2>(xp, wt, bias, p, b0, b1, y);
}

__attribute__((target("avx2,fma"))) void ConvBlocksAvx2(const float* xp, const float* wt, const float* bias,
                                                        const Plan& p, int64_t b0, int64_t b1, float* y) {
  ConvBlocks<8, kMrAvx2, 2>(xp, wt, bias, p, b0, b1, y);
}

std::atomic<bool> prefer_avx2{false};

bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has && !prefer_avx2.load(std::memory_order_relaxed);
}
bool HasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

#endif  // MEMOPT_DIRECT_CONV

}  // namespace

void DirectConvPreferAvx2ForTesting(bool prefer) {
#if MEMOPT_DIRECT_CONV
  prefer_avx2.store(prefer, std::memory_order_relaxed);
#else
  (void)prefer;
#endif
}

bool DirectConvApplies(const Window3& w) {
#if MEMOPT_DIRECT_CONV
  bool unit = w.in[0] == 1 && w.out[0] == 1 && w.kernel[0] == 1 && w.pad[0] == 0;
  for (size_t i = 0; i < 3; ++i) unit = unit && w.stride[i] == 1 && w.dilation[i] == 1;
  return unit && w.KernelSize() > 1 && (HasAvx512() || HasAvx2Fma());
#else
  (void)w;
  return false;
#endif
}

void DirectConv2D(const float* x, const float* weights, const float* bias, int64_t images, int64_t channels,
                  int64_t out_channels, int64_t group, const Window3& w, float* y) {
#if MEMOPT_DIRECT_CONV
  const bool avx512 = HasAvx512();
  const int64_t v = avx512 ? 16 : 8, mr = avx512 ? kMrAvx512 : kMrAvx2;
  Plan p;
  p.cg = channels / group;
  p.mg = out_channels / group;
  p.kh = w.kernel[1];
  p.kw = w.kernel[2];
  p.pt = w.pad[1];
  p.pl = w.pad[2];
  p.in_h = w.in[1];
  p.in_w = w.in[2];
  p.out_h = w.out[1];
  p.out_w = w.out[2];
  p.segs = (p.out_w + v - 1) / v;
  p.hp = p.out_h + p.kh - 1;
  p.wp = p.segs * v + p.kw - 1;
  if (images == 0 || p.out_h == 0 || p.out_w == 0 || p.mg == 0) return;
  for (int64_t c = 0; c < p.cg; ++c) {
    for (int64_t i = 0; i < p.kh; ++i) {
      for (int64_t j = 0; j < p.kw; ++j) p.tap.push_back(c * p.Plane() + i * p.wp + j);
    }
  }
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    for (int64_t seg = 0; seg < p.segs; ++seg) {
      p.in_off.push_back(oh * p.wp + seg * v);
      p.out_off.push_back(oh * p.out_w + seg * v);
      p.lanes.push_back(std::min(v, p.out_w - seg * v));
    }
  }
  const std::vector<float> wt = PackWeights(weights, p, group, mr);
  const int64_t blocks = (p.mg + mr - 1) / mr;
  const int64_t in_image = channels * p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  // Group g, blocks [b0, b1) of an image whose padded planes are xp and output is yi.
  const auto run = [&](const float* xp, int64_t g, int64_t b0, int64_t b1, float* yi) {
    const float* xg = xp + g * p.cg * p.Plane();
    const float* wg = wt.data() + g * blocks * p.K() * mr;
    const float* bg = bias != nullptr ? bias + g * p.mg : nullptr;
    float* yg = yi + g * p.mg * out_plane;
    if (avx512) {
      ConvBlocksAvx512(xg, wg, bg, p, b0, b1, yg);
    } else {
      ConvBlocksAvx2(xg, wg, bg, p, b0, b1, yg);
    }
  };
  const int64_t cost = out_channels * out_plane * p.K();
  if (images >= NumThreads()) {  // images in parallel, each range with its own padded planes
    ParallelFor(images, cost, [&](int64_t first, int64_t last) {
      ColumnBuffer<float> xp(channels * p.Plane());
      for (int64_t img = first; img < last; ++img) {
        PadImage(x + img * in_image, p, channels, xp.data());
        for (int64_t g = 0; g < group; ++g) run(xp.data(), g, 0, blocks, y + img * out_channels * out_plane);
      }
    });
    return;
  }
  ColumnBuffer<float> xp(channels * p.Plane());  // one image at a time, its blocks in parallel
  for (int64_t img = 0; img < images; ++img) {
    PadImage(x + img * in_image, p, channels, xp.data());
    ParallelFor(group * blocks, cost / std::max<int64_t>(1, group * blocks), [&](int64_t first, int64_t last) {
      for (int64_t t = first; t < last; ++t) {
        run(xp.data(), t / blocks, t % blocks, t % blocks + 1, y + img * out_channels * out_plane);
      }
    });
  }
#else
  (void)x, (void)weights, (void)bias, (void)images, (void)channels, (void)out_channels, (void)group, (void)w,
      (void)y;
#endif
}

std::optional<Window3> DirectConvInputGradWindow(const Window3& w) {
  if (!DirectConvApplies(w)) return std::nullopt;
  Window3 t = w;
  for (size_t i = 1; i < 3; ++i) {
    t.in[i] = w.out[i];
    t.out[i] = w.in[i];
    t.pad[i] = w.kernel[i] - 1 - w.pad[i];
    if (t.pad[i] < 0) return std::nullopt;
  }
  return t;
}

void DirectConvInputGrad(const float* dy, const float* weights, int64_t images, int64_t channels,
                         int64_t out_channels, int64_t group, const Window3& w, float* dx) {
  const std::optional<Window3> t = DirectConvInputGradWindow(w);
  if (!t) return;
  // flipped[g * cg + c][m][i][j] = weights[g * mg + m][c][kh - 1 - i][kw - 1 - j]
  const int64_t cg = channels / group, mg = out_channels / group, taps = w.KernelSize();
  std::vector<float> flipped(static_cast<size_t>(channels * mg * taps));
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t m = 0; m < mg; ++m) {
      for (int64_t c = 0; c < cg; ++c) {
        const float* src = weights + ((g * mg + m) * cg + c) * taps;
        float* dst = flipped.data() + ((g * cg + c) * mg + m) * taps;
        for (int64_t k = 0; k < taps; ++k) dst[k] = src[taps - 1 - k];
      }
    }
  }
  DirectConv2D(dy, flipped.data(), nullptr, images, out_channels, channels, group, *t, dx);
}

}  // namespace memopt::math
