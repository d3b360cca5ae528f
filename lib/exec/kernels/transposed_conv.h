// The transposed convolution: ConvTranspose's output, and ConvGrad's dX (the adjoint of Conv in
// its input, with the forward Conv's weights as they are).
//
//   Y[b, g*M/g + m, p] += sum over c in group g and taps t of X[b, c, q] * W[c, m, t]
//
// for every X position q whose window tap t lands on Y position p (col2im). The work items are
// (image, group, block of output channels): a block's Y planes take only its channels' rows of
// the column matrix, so blocks write disjoint planes and run in parallel, for one image or many.
// Within a block X's positions go a tile at a time (im2col.h: about 1 MiB of column scratch per
// thread), each tile one BLAS call whose shape the block and the tile fix (GemmAmong: the same
// bits on any thread count). 16-bit X is converted a tile at a time, 16-bit Y a block's planes at
// a time.
#pragma once

#include <cstdint>

#include "exec/kernels/im2col.h"
#include "exec/tensor.h"

namespace memopt::math {

/// x: [N, C, X spatial...] of any float type; w: [C, M/group, kernel...] as C; bias: M entries or
/// nullptr; y: [N, M, Y spatial...]. win is the window the forward convolution of Y has (in: Y's
/// spatial dims, out: X's). A float/double y (as C) must hold zeros or what to add to; a 16-bit y
/// is written whole.
template <typename C>
void TransposedConv(const Tensor& x, const C* w, const C* bias, int64_t group, const Window3& win, Tensor& y);

}  // namespace memopt::math
