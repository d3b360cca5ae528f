// A direct 2-D convolution for unit strides and dilations, the ConvNet case where im2col plus
// BLAS spends as long copying (the column matrix, then BLAS's packing of it) as multiplying.
//
// Each image is copied once into a zero-bordered plane per channel, so every tap of a row of
// outputs is one unaligned vector load; a register tile of MR output channels by NR vectors of
// outputs accumulates over (channel, kh, kw) with the weights repacked k-major per block of MR
// channels. Built for AVX-512 and AVX2+FMA (chosen at run time); other CPUs keep im2col + BLAS.
#pragma once

#include <cstdint>
#include <optional>

#include "exec/kernels/im2col.h"

namespace memopt::math {

/// Whether DirectConv2D serves this window: 2-D (or 1-D) spatial, unit strides and dilations, a
/// window of more than one tap, and a CPU with AVX-512 or AVX2 and FMA.
bool DirectConvApplies(const Window3& w);

/// y[img][oc] = bias[oc] + sum over the group's channels and the window of w * x, for `images`
/// images of `channels` channels into `out_channels` channels in `group` groups. x: [images,
/// channels, in...], weights: [out_channels, channels / group, kernel...], bias: out_channels
/// entries or null, y: [images, out_channels, out...] (every element written).
void DirectConv2D(const float* x, const float* weights, const float* bias, int64_t images, int64_t channels,
                  int64_t out_channels, int64_t group, const Window3& w, float* y);

/// The window of the input gradient of a forward window `w` as a convolution of dY (stride 1:
/// dY padded by kernel - 1 - pad, with the weights flipped); nullopt where DirectConvApplies
/// rejects it or a begin pad exceeds kernel - 1.
std::optional<Window3> DirectConvInputGradWindow(const Window3& w);

/// dx = the gradient of DirectConv2D's y with respect to x, given dy, for a window `w` for which
/// DirectConvInputGradWindow has a value: a direct convolution of dy with the weights flipped in
/// space and swapped between input and output channels within each group. Every element of dx
/// [images, channels, in...] is written.
void DirectConvInputGrad(const float* dy, const float* weights, int64_t images, int64_t channels,
                         int64_t out_channels, int64_t group, const Window3& w, float* dx);

/// Tests only: run the AVX2 tiles even where AVX-512 is present (so both are checked on one
/// machine); false restores the choice by CPU.
void DirectConvPreferAvx2ForTesting(bool prefer);

}  // namespace memopt::math
