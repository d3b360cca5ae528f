// Element types as C++ types, for the CPU kernels and the CUDA kernels alike (host and device):
// the storage types of the 16-bit floats, the type arithmetic runs in, loads and stores, and one
// conversion between any two element types, Cast's rules (ONNX Cast as memopt runs it):
// - a float source is read in its compute type (float or double; the 16-bit floats through float),
// - a 16-bit float destination is rounded from float (nearest even),
// - float -> integer truncates toward zero and wraps to the target width through int64 (NaN gives
//   0, beyond int64 saturates; uint64 keeps its upper range),
// - anything -> bool is `!= 0`, bool -> number is 0 or 1, integer -> integer wraps.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "util/half.h"

namespace memopt {

/// Storage types of the 16-bit float formats (the bit pattern; 2 bytes, trivially copyable).
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

/// The C++ type used for arithmetic on storage type T: float for float/Half/BFloat16, double for
/// double, T itself for integers and bool.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Half> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

template <typename T>
inline constexpr bool kIsFloatStorage =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// Storage value -> compute value.
MEMOPT_HALF_HD inline float Load(Half v) { return Float16ToFloat(v.bits); }
MEMOPT_HALF_HD inline float Load(BFloat16 v) { return Bfloat16ToFloat(v.bits); }
template <typename T>
MEMOPT_HALF_HD inline T Load(T v) {
  return v;
}

/// Any arithmetic value -> storage type T (rounding to nearest even for the 16-bit floats;
/// C++ conversion rules otherwise, with bool = (v != 0)).
template <typename T, typename V>
MEMOPT_HALF_HD inline T StoreAs(V v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{FloatToFloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16{FloatToBfloat16(static_cast<float>(v))};
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != V(0);
  } else {
    return static_cast<T>(v);
  }
}

/// Float -> integer D: truncate, wrap through int64 (uint64 keeps its upper range), NaN -> 0,
/// beyond int64 saturate to D's limits.
template <typename D>
MEMOPT_HALF_HD D FloatToInt(double v) {
  if (v != v) return D(0);  // NaN
  const double t = ::trunc(v);
  if (t >= -9223372036854775808.0 && t < 9223372036854775808.0) return static_cast<D>(static_cast<int64_t>(t));
  if constexpr (std::is_same_v<D, uint64_t>) {
    if (t >= 0 && t < 18446744073709551616.0) return static_cast<uint64_t>(t);
  }
  using U = std::make_unsigned_t<D>;
  constexpr D kMax = std::is_signed_v<D> ? static_cast<D>(static_cast<U>(~U(0)) >> 1) : static_cast<D>(~U(0));
  constexpr D kLowest = std::is_signed_v<D> ? static_cast<D>(-kMax - 1) : D(0);
  return t < 0 ? kLowest : kMax;
}

/// One element of type S converted to type D by the rules above.
template <typename D, typename S>
MEMOPT_HALF_HD D ConvertElement(S v) {
  if constexpr (kIsFloatStorage<S>) {
    const auto f = Load(v);
    if constexpr (kIsFloatStorage<D>) {
      return StoreAs<D>(f);
    } else if constexpr (std::is_same_v<D, bool>) {
      return f != 0;
    } else {
      return FloatToInt<D>(static_cast<double>(f));
    }
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else {
    return StoreAs<D>(v);
  }
}

}  // namespace memopt
