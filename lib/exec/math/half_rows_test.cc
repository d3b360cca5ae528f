// The vectorised row conversions give the bits of util/half.h's scalar conversions: every float16
// and bfloat16 pattern up, and floats across every exponent (ties, the subnormal boundary,
// overflow, NaNs) down.
#include "exec/math/half_rows.h"

#include <catch2/catch.hpp>
#include <bit>
#include <cstring>
#include <vector>

#include "util/half.h"

namespace memopt::math {
namespace {

bool SameBits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

/// Float bit patterns: every 65,537th of the 2^32, plus each exponent's neighbourhood of the
/// float16 and bfloat16 rounding points (ties and their neighbours).
std::vector<float> SampleFloats() {
  std::vector<uint32_t> bits;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 65537) bits.push_back(static_cast<uint32_t>(b));
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t e = 0; e < 256; ++e) {
      for (uint32_t low : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu, 0x2000u, 0x3000u, 0x7fffu, 0x8000u, 0x8001u,
                           0x18000u, 0x7fffffu, 0x400000u, 0x401000u}) {
        bits.push_back(sign | (e << 23) | (low & 0x7fffffu));
      }
      // Subnormal-half range: every rounding point below 2^-14 is a multiple of 2^-25.
    }
  }
  for (uint32_t q = 0; q < 2 * 1024 + 2; ++q) {  // q * 2^-25 and its neighbours, up to 2^-14
    const float v = static_cast<float>(q) * 0x1p-25f;
    const uint32_t b = std::bit_cast<uint32_t>(v);
    for (uint32_t d : {b - 1, b, b + 1}) bits.push_back(d);
  }
  std::vector<float> out;
  out.reserve(bits.size());
  for (uint32_t b : bits) out.push_back(std::bit_cast<float>(b));
  return out;
}

TEST_CASE("half rows: every float16 and bfloat16 pattern converts up as the scalar conversion", "[exec][half_rows]") {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> up(all.size());
  HalfToFloatArray(all.data(), up.data(), static_cast<int64_t>(all.size()));
  int64_t bad = 0;
  for (uint32_t i = 0; i < 65536; ++i) bad += !SameBits(up[i], Float16ToFloat(static_cast<uint16_t>(i)));
  CHECK(bad == 0);
  Bfloat16ToFloatArray(all.data(), up.data(), static_cast<int64_t>(all.size()));
  bad = 0;
  for (uint32_t i = 0; i < 65536; ++i) bad += !SameBits(up[i], Bfloat16ToFloat(static_cast<uint16_t>(i)));
  CHECK(bad == 0);
}

TEST_CASE("half rows: floats round down as the scalar conversion", "[exec][half_rows]") {
  const std::vector<float> x = SampleFloats();
  std::vector<uint16_t> h(x.size()), bf(x.size());
  FloatToHalfArray(x.data(), h.data(), static_cast<int64_t>(x.size()));
  FloatToBfloat16Array(x.data(), bf.data(), static_cast<int64_t>(x.size()));
  int64_t bad_h = 0, bad_bf = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    bad_h += h[i] != FloatToFloat16(x[i]);
    bad_bf += bf[i] != FloatToBfloat16(x[i]);
  }
  CHECK(x.size() > 60000);
  CHECK(bad_h == 0);
  CHECK(bad_bf == 0);
  // Round trips and hand-checked points.
  const float pts[] = {0.0f, 65504.0f, 65520.0f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-14f, 1.0f + 0x1p-11f};
  const uint16_t want[] = {0x0000, 0x7bff, 0x7c00, 0x0001, 0x0000, 0x0001, 0x0400, 0x3c00};
  uint16_t got[8];
  FloatToHalfArray(pts, got, 8);
  for (int i = 0; i < 8; ++i) CHECK(got[i] == want[i]);
}

}  // namespace
}  // namespace memopt::math
