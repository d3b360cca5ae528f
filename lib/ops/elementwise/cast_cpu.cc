// Cast, CastLike and BitCast. Cast/CastLike convert between every numeric type, bool and the 8-bit float formats
// (float8 E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ; `saturate` applies to those only), plus float4 E2M1, int4 and uint4 held
// one element per byte (int4 sign-extended, float4 as its 4-bit code).
//
// Float -> integer truncates toward zero and wraps to the target width like a C cast through
// int64 (so -9.0 -> int4 gives 7, as the ONNX tests expect); NaN gives 0 and values beyond int64
// saturate. Float -> float8 rounds to nearest even.

// The build uses -O2, whose "very cheap" vectorizer cost model skips loops with a runtime trip
// count; the elementwise loops here are meant to be vectorized, so use the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "exec/kernels/elementwise.h"
#include "ir/op_registry.h"

namespace memopt::elementwise {

namespace {

// ---------------------------------------------------------------------------------------------
// Small float formats.

struct MiniFloat {
  int exp_bits;
  int mant_bits;
  int bias;
  enum Special { kIeee, kFn, kFnuz, kNone } special;  // inf/NaN encoding
};

std::optional<MiniFloat> MiniFormat(DataType t) {
  switch (t) {
    case DataType::kFloat8E4M3FN:
      return MiniFloat{4, 3, 7, MiniFloat::kFn};
    case DataType::kFloat8E4M3FNUZ:
      return MiniFloat{4, 3, 8, MiniFloat::kFnuz};
    case DataType::kFloat8E5M2:
      return MiniFloat{5, 2, 15, MiniFloat::kIeee};
    case DataType::kFloat8E5M2FNUZ:
      return MiniFloat{5, 2, 16, MiniFloat::kFnuz};
    case DataType::kFloat4E2M1:
      return MiniFloat{2, 1, 1, MiniFloat::kNone};
    default:
      return std::nullopt;
  }
}

float DecodeMini(const MiniFloat& f, uint8_t code) {
  const int sign_shift = f.exp_bits + f.mant_bits;
  const bool neg = ((code >> sign_shift) & 1) != 0;
  const int exp_mask = (1 << f.exp_bits) - 1;
  const int mant_mask = (1 << f.mant_bits) - 1;
  const int e = (code >> f.mant_bits) & exp_mask;
  const int m = code & mant_mask;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.special == MiniFloat::kFnuz && neg && e == 0 && m == 0) return nan;  // 0x80
  if (f.special == MiniFloat::kIeee && e == exp_mask) {
    return m == 0 ? (neg ? -INFINITY : INFINITY) : nan;
  }
  if (f.special == MiniFloat::kFn && e == exp_mask && m == mant_mask) return nan;
  const double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - f.bias - f.mant_bits)
                          : std::ldexp(static_cast<double>(m + (1 << f.mant_bits)), e - f.bias - f.mant_bits);
  return static_cast<float>(neg ? -v : v);
}

/// Largest finite value and its code (without sign).
std::pair<double, uint8_t> MiniMax(const MiniFloat& f) {
  int e = (1 << f.exp_bits) - 1;
  int m = (1 << f.mant_bits) - 1;
  if (f.special == MiniFloat::kIeee) e -= 1;
  if (f.special == MiniFloat::kFn) m -= 1;
  const double v = std::ldexp(static_cast<double>(m + (1 << f.mant_bits)), e - f.bias - f.mant_bits);
  return {v, static_cast<uint8_t>((e << f.mant_bits) | m)};
}

uint8_t EncodeMini(const MiniFloat& f, float x, bool saturate) {
  const int sign_shift = f.exp_bits + f.mant_bits;
  const uint8_t sign = std::signbit(x) ? static_cast<uint8_t>(1u << sign_shift) : uint8_t{0};
  const uint8_t all_ones = static_cast<uint8_t>((1u << sign_shift) - 1u);
  // (Not a structured binding: lambdas below capture these, which clang < 16 rejects.)
  const std::pair<double, uint8_t> max_pair = MiniMax(f);
  const double max_value = max_pair.first;
  const uint8_t max_code = max_pair.second;
  const auto nan_code = [&]() -> uint8_t {
    switch (f.special) {
      case MiniFloat::kFn:
        return static_cast<uint8_t>(sign | all_ones);
      case MiniFloat::kIeee:
        return static_cast<uint8_t>(sign | (all_ones - 1));  // quiet NaN, as ml_dtypes
      case MiniFloat::kFnuz:
        return 0x80;
      case MiniFloat::kNone:
        return static_cast<uint8_t>(sign ? 0 : (1u << sign_shift));  // as ml_dtypes does
    }
    return 0;
  };
  const auto overflow = [&]() -> uint8_t {
    if (saturate || f.special == MiniFloat::kNone) return static_cast<uint8_t>(sign | max_code);
    if (f.special == MiniFloat::kIeee) return static_cast<uint8_t>(sign | (((1u << f.exp_bits) - 1u) << f.mant_bits));
    return nan_code();
  };
  if (std::isnan(x)) return nan_code();
  const double a = std::fabs(static_cast<double>(x));
  if (std::isinf(a)) return overflow();
  const uint8_t zero = f.special == MiniFloat::kFnuz ? uint8_t{0} : sign;
  if (a == 0.0) return zero;
  const int emin = 1 - f.bias;
  const int e = std::max(std::ilogb(a), emin);
  const double quantum = std::ldexp(1.0, e - f.mant_bits);
  const double rounded = std::nearbyint(a / quantum) * quantum;  // exact scaling, ties to even
  if (rounded > max_value) return overflow();
  if (rounded == 0.0) return zero;
  const int re = std::ilogb(rounded);
  int exp_field = 0;
  int mant = 0;
  if (re < emin) {
    mant = static_cast<int>(rounded / std::ldexp(1.0, emin - f.mant_bits));
  } else {
    exp_field = re + f.bias;
    mant = static_cast<int>(rounded / std::ldexp(1.0, re - f.mant_bits)) - (1 << f.mant_bits);
  }
  return static_cast<uint8_t>(sign | (exp_field << f.mant_bits) | mant);
}

// ---------------------------------------------------------------------------------------------
// Scalar conversions.

bool IsSubByteOrMini(DataType t) { return MiniFormat(t).has_value() || t == DataType::kInt4 || t == DataType::kUint4; }

/// Element i of a tensor as float (any numeric type, the mini formats, int4/uint4, bool).
std::vector<float> DecodeAsFloat(const Tensor& in) {
  const int64_t n = in.numel();
  std::vector<float> out(static_cast<size_t>(n));
  if (auto f = MiniFormat(in.dtype())) {
    const uint8_t* p = in.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = DecodeMini(*f, p[i] & ((1u << (f->exp_bits + f->mant_bits + 1)) - 1u));
  } else if (in.dtype() == DataType::kInt4) {
    const uint8_t* p = in.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<int>((p[i] & 0xF) ^ 0x8) - 8);
  } else if (in.dtype() == DataType::kUint4) {
    const uint8_t* p = in.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i] & 0xF);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in.GetAsDouble(i));
  }
  return out;
}

/// Writes float values into `out` (a mini format, int4/uint4 or any numeric type).
Status EncodeFromFloat(const std::vector<float>& values, bool saturate, Tensor& out) {
  const int64_t n = out.numel();
  if (auto f = MiniFormat(out.dtype())) {
    uint8_t* p = out.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = EncodeMini(*f, values[i], saturate);
    return Status::Ok();
  }
  if (out.dtype() == DataType::kInt4 || out.dtype() == DataType::kUint4) {
    const bool is_signed = out.dtype() == DataType::kInt4;
    int8_t* p = out.data<int8_t>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = FloatToInt<int64_t>(values[i]) & 0xF;
      p[i] = static_cast<int8_t>(is_signed ? ((v ^ 0x8) - 8) : v);
    }
    return Status::Ok();
  }
  return DispatchAll(out.dtype(), [&](auto tag) {
    using D = typename decltype(tag)::type;
    D* p = out.data<D>();
    for (int64_t i = 0; i < n; ++i) p[i] = ConvertElement<D>(values[i]);
  });
}

Status CastTensor(const KernelContext& ctx, const Tensor& in, DataType to, bool saturate, Tensor& out) {
  if (in.dtype() == to) {
    out = in.Clone();
    return Status::Ok();
  }
  if (in.dtype() == DataType::kString || to == DataType::kString) {
    return UnsupportedType(DataType::kString, "Cast (string conversion)");
  }
  out = Tensor(to, in.shape());
  if (IsSubByteOrMini(in.dtype()) || IsSubByteOrMini(to)) {
    if (!IsSubByteOrMini(in.dtype()) && in.dtype() != DataType::kBool && !IsFloatingPoint(in.dtype()) &&
        !IsInteger(in.dtype())) {
      return UnsupportedType(in.dtype(), "Cast");
    }
    return EncodeFromFloat(DecodeAsFloat(in), saturate, out);
  }
  const int64_t n = in.numel();
  Status st = DispatchAll(in.dtype(), [&](auto src_tag) -> Status {
    using S = typename decltype(src_tag)::type;
    const S* src = in.data<S>();
    return DispatchAll(to, [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      D* dst = out.data<D>();
      ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst[i] = ConvertElement<D>(src[i]);
      });
    });
  });
  return st.WithContext("node " + ctx.node->Describe());
}

std::vector<DataType> CastTypes() {
  std::vector<DataType> t = NumericAndBoolTypes();
  t.insert(t.end(), {DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ, DataType::kFloat8E5M2,
                     DataType::kFloat8E5M2FNUZ, DataType::kFloat4E2M1, DataType::kInt4, DataType::kUint4});
  return t;
}

Status CastKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  if (!ctx.node->HasAttr("to")) return ctx.Error("attribute 'to' is missing");
  const int64_t to = ctx.node->GetInt("to", 0);
  if (!IsKnownDataType(static_cast<int32_t>(to)) || to == 0) {
    return Unsupported("node " + ctx.node->Describe() + ": unsupported target type " + std::to_string(to));
  }
  const bool saturate = ctx.node->GetInt("saturate", 1) != 0;
  return CastTensor(ctx, ctx.input(0), static_cast<DataType>(to), saturate, ctx.outputs[0]);
}

Status CastLikeKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 2));
  const bool saturate = ctx.node->GetInt("saturate", 1) != 0;
  return CastTensor(ctx, ctx.input(0), ctx.input(1).dtype(), saturate, ctx.outputs[0]);
}

/// BitCast (opset 26): reinterprets the bytes as type `to` of the same element size.
Status BitCastKernel(KernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, 1));
  const Tensor& x = ctx.input(0);
  const int64_t to_raw = ctx.node->GetInt("to", 0);
  if (!IsKnownDataType(static_cast<int32_t>(to_raw)) || to_raw == 0) {
    return Unsupported("node " + ctx.node->Describe() + ": unsupported target type " + std::to_string(to_raw));
  }
  const auto to = static_cast<DataType>(to_raw);
  if (x.dtype() == DataType::kString || to == DataType::kString || ElemByteSize(x.dtype()) != ElemByteSize(to)) {
    return Unsupported("node " + ctx.node->Describe() + ": BitCast from " + DataTypeName(x.dtype()) + " to " +
                       DataTypeName(to) + " needs equal element sizes");
  }
  ctx.outputs[0] = Tensor(to, x.shape());
  if (x.bytes() > 0) std::memcpy(ctx.outputs[0].raw(), x.raw(), static_cast<size_t>(x.bytes()));
  if (to == DataType::kBool) {
    uint8_t* p = ctx.outputs[0].data<uint8_t>();
    for (int64_t i = 0; i < x.numel(); ++i) p[i] = p[i] != 0 ? 1 : 0;
  }
  return Status::Ok();
}

}  // namespace

static void RegisterCastKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Cast", CastKernel, CastTypes());
  r.SetCpuKernel("", "CastLike", CastLikeKernel, CastTypes());
  r.SetCpuKernel("", "BitCast", BitCastKernel, CastTypes());
}

}  // namespace memopt::elementwise

MEMOPT_OPS(elementwise, cast_cpu) {
  memopt::elementwise::RegisterCastKernels(ops);
}
