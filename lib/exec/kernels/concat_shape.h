// Concat's output shape and checks, shared by the CPU kernels (ops/layout/layout_cpu.cc) and the CUDA
// wrapper: one element type, equal ranks, equal dims except along the axis.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/dtype.h"
#include "util/status.h"

namespace memopt {

struct ConcatPart {
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> shape;
};

/// The shape of the parts joined along `axis` (already normalised against the first part's
/// rank). InvalidInput (the caller adds the node) when the types or the other dims differ.
Expected<std::vector<int64_t>> ConcatShape(const std::vector<ConcatPart>& parts, int64_t axis);

}  // namespace memopt
