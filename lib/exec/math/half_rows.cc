#include "exec/math/half_rows.h"

#include <bit>

#include "exec/math/target_clones.h"  // the loops for AVX-512, AVX2 and the baseline

namespace memopt::math {

namespace {

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  // Normal: rebias the exponent (15 -> 127); inf/NaN: exponent 31 -> 255, the payload kept;
  // zero and subnormals: em * 2^-24, exact in float.
  const uint32_t rebias = em >= 0x7c00u ? (224u << 23) : (112u << 23);
  const uint32_t normal = (em << 13) + rebias;
  const float small = static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f;
  const uint32_t mag = em < 0x400u ? std::bit_cast<uint32_t>(small) : normal;
  return std::bit_cast<float>(sign | mag);
}

inline uint16_t FloatToHalf(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  // Normal results: round to nearest even on the 13 bits dropped, then rebias (127 -> 15).
  const uint32_t normal = (abs + 0xfffu + ((abs >> 13) & 1u) - 0x38000000u) >> 13;
  // Below 2^-14: adding 0.5 leaves the value in units of 2^-24 in the low mantissa bits, rounded
  // to nearest even by the float addition itself.
  const float small_sum = std::bit_cast<float>(abs) + 0.5f;
  const uint32_t small = std::bit_cast<uint32_t>(small_sum) - 0x3f000000u;
  uint32_t r = abs < 0x38800000u ? small : normal;
  r = abs >= 0x477ff000u ? 0x7c00u : r;
  r = abs > 0x7f800000u ? 0x7e00u : r;
  return static_cast<uint16_t>(sign | r);
}

inline uint16_t FloatToBf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t nan = (bits >> 16) | 0x40u;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

}  // namespace

MEMOPT_VECTOR_CLONES void HalfToFloatArray(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = HalfToFloat(x[i]);
}

MEMOPT_VECTOR_CLONES void FloatToHalfArray(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = FloatToHalf(x[i]);
}

MEMOPT_VECTOR_CLONES void Bfloat16ToFloatArray(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::bit_cast<float>(static_cast<uint32_t>(x[i]) << 16);
}

MEMOPT_VECTOR_CLONES void FloatToBfloat16Array(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = FloatToBf16(x[i]);
}

}  // namespace memopt::math
