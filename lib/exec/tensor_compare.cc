#include "exec/tensor_compare.h"

#include <cmath>
#include <cstring>
#include <sstream>

namespace memopt {

namespace {

std::string ValueText(const Tensor& t, int64_t i) {
  if (t.dtype() == DataType::kString) return "'" + t.strings()[static_cast<size_t>(i)] + "'";
  std::ostringstream s;
  s.precision(9);
  s << t.GetAsDouble(i);
  return s.str();
}

}  // namespace

TensorComparison CompareTensors(const Tensor& actual, const Tensor& expected, const CompareOptions& options) {
  TensorComparison result;
  if (actual.dtype() != expected.dtype()) {
    result.match = false;
    result.mismatch = "dtype " + DataTypeName(actual.dtype()) + ", expected " + DataTypeName(expected.dtype());
    return result;
  }
  if (actual.shape() != expected.shape()) {
    result.match = false;
    result.mismatch = "shape " + actual.Describe() + ", expected " + expected.Describe();
    return result;
  }
  const int64_t n = expected.numel();
  const DataType dt = expected.dtype();
  int64_t first = -1;
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (dt == DataType::kString) {
      ok = actual.strings()[static_cast<size_t>(i)] == expected.strings()[static_cast<size_t>(i)];
    } else if (IsFloatingPoint(dt)) {
      const double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
      if (std::isnan(e) || std::isnan(a)) {
        ok = std::isnan(e) && std::isnan(a);
      } else if (std::isinf(e) || std::isinf(a)) {
        ok = a == e;
      } else {
        const double diff = std::fabs(a - e);
        result.worst_abs_diff = std::max(result.worst_abs_diff, diff);
        ok = diff <= options.atol + options.rtol * std::fabs(e);
      }
    } else if (dt == DataType::kInt64 || dt == DataType::kUint64) {
      // Compared as bits: doubles cannot hold every 64-bit integer.
      ok = std::memcmp(static_cast<const char*>(actual.raw()) + 8 * i, static_cast<const char*>(expected.raw()) + 8 * i,
                       8) == 0;
    } else {
      ok = actual.GetAsDouble(i) == expected.GetAsDouble(i);
    }
    if (!ok) {
      if (first < 0) first = i;
      ++result.values_differing;
    }
  }
  if (result.values_differing == 0) return result;
  result.match = false;
  result.mismatch = std::to_string(result.values_differing) + " of " + std::to_string(n) +
                    " values differ; first at " + std::to_string(first) + ": got " + ValueText(actual, first) +
                    ", expected " + ValueText(expected, first);
  return result;
}

}  // namespace memopt
