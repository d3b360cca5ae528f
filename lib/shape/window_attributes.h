// The window attributes of convolutions and pooling (Conv, ConvInteger, QLinearConv,
// ConvTranspose, MaxPool, AveragePool, LpPool), checked in one place: shape inference checks them
// on load for every subcommand, and the CPU kernels check them again with the same words.
//
// Over n spatial dims: kernel_shape, strides and dilations have n entries (positive), pads 2n (a
// begin and an end per dim), ConvTranspose's output_padding n and output_shape n or n + 2;
// auto_pad is NOTSET, SAME_UPPER, SAME_LOWER or VALID. With the rank unknown, the attributes
// must agree with each other.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "util/status.h"

namespace memopt::shape {

/// An InvalidInput status whose message names the attribute and the counts, without the node
/// (callers add it); Ok when the attributes are valid. `spatial` < 0: the rank is unknown.
Status CheckWindowAttributes(const Node& node, int64_t spatial);

}  // namespace memopt::shape
