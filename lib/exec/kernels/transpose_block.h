// A 2-D transpose of a block of 4-byte elements: 8x8 register transposes (AVX, chosen at run
// time) where whole 8x8 squares fit, element by element at the edges and on other CPUs. The
// strided copy's transpose tiles (exec/kernels/tensor_common.cc) run through it.
#pragma once

#include <cstdint>

namespace memopt {

/// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols (bit copies: any
/// 4-byte type).
void TransposeBlock4(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride, int64_t rows,
                     int64_t cols);

/// Tests only: take the element-by-element path even where AVX is present; false restores the
/// choice by CPU.
void TransposeBlockScalarForTesting(bool scalar);

}  // namespace memopt
