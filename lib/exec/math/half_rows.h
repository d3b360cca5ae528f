// float16 / bfloat16 rows to float32 and back, vectorised.
//
// The kernels compute 16-bit float tensors in float32. Converting a whole operand first holds a
// float copy twice its size outside the planned arena (gpt2's lm_head: 154 MB for a 77 MB
// weight); converting one row or tile at a time into a small buffer keeps that scratch bounded,
// which needs the conversion itself to be cheap, since a tile's operands are converted again for
// each tile they meet. These are the scalar conversions of util/half.h written as selects (the
// same bits for every input, NaN payloads and subnormals included), so the loops vectorise;
// compiled for AVX-512, AVX2 and the baseline like exec/math/vector_math.h.
#pragma once

#include <cstdint>

namespace memopt::math {

/// y[i] = float(x[i]) for float16 bit patterns x (exact).
void HalfToFloatArray(const uint16_t* x, float* y, int64_t n);
/// y[i] = float16(x[i]), rounded to nearest even (overflow to inf, NaN to the quiet NaN 0x7e00).
void FloatToHalfArray(const float* x, uint16_t* y, int64_t n);
/// The same for bfloat16 bit patterns.
void Bfloat16ToFloatArray(const uint16_t* x, float* y, int64_t n);
void FloatToBfloat16Array(const float* x, uint16_t* y, int64_t n);

}  // namespace memopt::math
