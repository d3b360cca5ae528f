// Branch-free float32 exp, tanh, erf and the normal CDF for the CPU kernels.
//
// libm's expf/erff/tanhf are calls the compiler cannot vectorise, and glibc's expf takes a slow
// path for the large negative arguments that masked attention scores produce (-1e4). These are
// straight-line polynomial evaluations (selects, no branches or calls), so loops over them
// vectorise, and the array functions below are compiled for AVX-512, AVX2 and the baseline and
// picked at load time. Accuracy (vector_math_test.cc, against double-precision libm): exp, tanh
// and erf within 4 ulp or 1e-7 relative over their float range; the normal CDF within (2e-6 +
// 1e-7 x^2) relative down to its underflow (the tail's exponent rounds in float). float64 kernels keep using <cmath>. CPU only: the CUDA kernels
// use the device's own intrinsics.
//
// The polynomial coefficients are least-squares fits made for memopt (double-precision fits of
// libm values, rounded to float).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace memopt::math {

namespace vm_detail {

/// 2^n for integer-valued n in [-126, 127], built from the exponent bits.
inline float Pow2(int32_t n) { return std::bit_cast<float>(static_cast<uint32_t>(n + 127) << 23); }

/// p(t) = c[0] + c[1] t + ... (Horner).
template <int N>
inline float Poly(float t, const float (&c)[N]) {
  float acc = c[N - 1];
  for (int i = N - 2; i >= 0; --i) acc = acc * t + c[i];
  return acc;
}

inline constexpr float kExpPoly[] = {0.5f, 0.1666666716337204f, 0.04166650399565697f, 0.008333303965628147f,
                                     0.0013929606648162007f, 0.00019894805154763162f};
// (tanh(x)/x - 1) / x^2 on |x| <= 0.625, in z = x^2.
inline constexpr float kTanhPoly[] = {-0.3333333432674408f, 0.13333310186862946f, -0.05396093800663948f,
                                      0.02178216725587845f, -0.008386143483221531f, 0.002339352387934923f};
// erf(x)/x on |x| <= 1, in z = x^2.
inline constexpr float kErfPoly[] = {1.128379225730896f,     -0.3761262893676758f, 0.11283634603023529f,
                                     -0.0268560703843832f,   0.005192957818508148f, -0.0008053751080296934f,
                                     8.006874122656882e-05f};
// erf(x) on 1 <= x <= 4, in t = x - 2.5 (1.7 ulp in float; erf rounds to 1 from x = 3.8325 on).
inline constexpr float kErfMidPoly[] = {0.9995930790901184f,     0.0021780210081487894f,  -0.00544718699529767f,
                                        0.008353904820978642f,   -0.008612043224275112f,  0.00610118405893445f,
                                        -0.0028253872878849506f, 0.0005729169934056699f,  0.0002935898373834789f,
                                        -0.0002802550734486431f, 5.87144386372529e-05f,   2.129942186002154e-05f,
                                        -8.595904546382371e-06f};
// erfc(u) = t exp(-u^2 + g(t)) with t = 1 / (1 + u/2), for u >= 0.95; g in t.
inline constexpr float kErfcPoly[] = {-1.2655287981033325f, 1.0005033016204834f,  0.36838361620903015f,
                                      0.13317233324050903f, -0.32298386096954346f, 0.5929693579673767f,
                                      -1.5762144327163696f, 1.8506433963775635f,  -0.9764627814292908f,
                                      0.19525067508220673f};

}  // namespace vm_detail

/// e^x: overflows to +inf above 88.72, underflows through the subnormals to 0, NaN stays NaN.
inline float ExpF(float x) {
  using namespace vm_detail;
  const float xc = x < -104.0f ? -104.0f : (x > 88.8f ? 88.8f : x);
  // n = round(x / ln2) by the 1.5 * 2^23 trick (round to nearest); r = x - n ln2 in two parts.
  constexpr float kShift = 12582912.0f;
  const float shifted = xc * 1.44269504088896341f + kShift;
  const int32_t n = std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kShift);
  const float fn = shifted - kShift;
  const float r = (xc - fn * 0.693359375f) - fn * -2.12194440054690583e-4f;
  const float p = 1.0f + r + r * r * Poly(r, kExpPoly);
  // Scale in two steps so that 2^n outside the normal range still comes out right.
  const int32_t n1 = n / 2;
  float y = p * Pow2(n1) * Pow2(n - n1);
  y = x > 88.72283935546875f ? __builtin_inff() : y;
  y = x < -103.972084f ? 0.0f : y;
  return x != x ? x : y;
}

/// erfc(u) for u >= 0.95, given u and u^2 (u clamped to 10, where erfc is below the smallest
/// float). The exponent's rounding, about |u^2| * 6e-8, is the error that grows in the tail.
inline float ErfcTailF(float u, float u2) {
  using namespace vm_detail;
  const bool far = u > 10.0f;
  const float a = far ? 10.0f : u;
  const float t = 1.0f / (1.0f + 0.5f * a);
  return t * ExpF(-(far ? 100.0f : u2) + Poly(t, kErfcPoly));
}

/// erf: the odd polynomial below 1, one polynomial on [1, 4] above (no exp or division: a third
/// of the tail form's work), 1 from 4 on.
inline float ErfF(float x) {
  using namespace vm_detail;
  const float a = x < 0.0f ? -x : x;
  const float small = x * Poly(x * x, kErfPoly);
  const float mid = Poly((a > 4.0f ? 4.0f : a) - 2.5f, kErfMidPoly);
  const float capped = mid > 1.0f ? 1.0f : mid;
  const float one = a >= 4.0f ? 1.0f : capped;
  const float large = x < 0.0f ? -one : one;
  return a >= 1.0f ? large : small;  // NaN takes the small branch and stays NaN
}

/// Phi(x) = P(N(0,1) <= x) = erfc(-x / sqrt 2) / 2, accurate in relative terms in the lower tail
/// (Gelu's x Phi(x) for negative x does not cancel as x (1 + erf(x / sqrt 2)) / 2 does).
inline float NormCdfF(float x) {
  using namespace vm_detail;
  const float u = x * -0.70710678118654752f;  // Phi(x) = erfc(u) / 2
  const float a = u < 0.0f ? -u : u;
  // u^2 = x^2 / 2 from x itself: one rounding fewer than squaring u.
  const float tail = 0.5f * ErfcTailF(a < 0.95f ? 0.95f : a, a < 0.95f ? 0.9025f : 0.5f * (x * x));
  const float mid = 0.5f - 0.5f * u * Poly(u * u, kErfPoly);
  const float outer = u > 0.0f ? tail : 1.0f - tail;
  return a >= 1.0f ? outer : mid;
}

inline float TanhF(float x) {
  using namespace vm_detail;
  const float a = x < 0.0f ? -x : x;
  const float z = x * x;
  const float small = x + x * z * Poly(z, kTanhPoly);
  const float e = ExpF(2.0f * (a > 10.0f ? 10.0f : a));
  const float mag = 1.0f - 2.0f / (e + 1.0f);
  const float large = x < 0.0f ? -mag : mag;
  return a > 0.625f ? large : small;
}

// Overloads for kernels templated on the compute type: float takes the forms above, double libm.
inline float Exp(float x) { return ExpF(x); }
inline double Exp(double x) { return std::exp(x); }
inline float Erf(float x) { return ErfF(x); }
inline double Erf(double x) { return std::erf(x); }
inline float Tanh(float x) { return TanhF(x); }
inline double Tanh(double x) { return std::tanh(x); }
inline float NormCdf(float x) { return NormCdfF(x); }
inline double NormCdf(double x) { return 0.5 * std::erfc(x * -0.70710678118654752440); }

// Array forms (any n; y may alias x).
void ExpArray(const float* x, float* y, int64_t n);
void ErfArray(const float* x, float* y, int64_t n);
void TanhArray(const float* x, float* y, int64_t n);
/// y[i] = exp(x[i] (+ bias[i]) - shift) for a row of n; returns the sum of y, taken in 8
/// interleaved partial sums (bias may be null). The softmax and log-sum-exp rows share it.
float ExpShiftedSum(const float* x, const float* bias, float shift, float* y, int64_t n);
/// The largest of x[i] (+ bias[i]) over a row of n (bias may be null); -inf for an empty row or
/// one of NaNs and -inf only (NaN never compares larger).
float RowMax(const float* x, const float* bias, int64_t n);
/// Softmax (or log-softmax) of `rows` contiguous rows of n: the row's max subtracted, exp and its
/// sum in one pass (16 interleaved partial sums, a fixed tree, the tail in order), then scaled by
/// 1 / sum (or less log sum). One call
/// for many short rows (attention's), so that the per-row work is not calls.
void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t n, bool log_softmax);
/// sum a[i] b[i] in double (products exact), taken in 8 interleaved partial sums.
double DotInDouble(const float* a, const float* b, int64_t n);
/// y[i] *= scale.
void ScaleArray(float* y, float scale, int64_t n);
/// y = v Phi(v) (exact Gelu) of v = x + bias (bias: n entries, or null).
void GeluArray(const float* x, const float* bias, float* y, int64_t n);
/// dx = dy (Phi(v) + v phi(v)) of v = x + bias (bias: n entries, or null).
void GeluGradArray(const float* dy, const float* x, const float* bias, float* dx, int64_t n);

}  // namespace memopt::math
