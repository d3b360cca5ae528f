#include "shape/value_util.h"

namespace memopt::shape {

std::optional<std::vector<int64_t>> SmallConstDims(const Shape& shape) {
  std::vector<int64_t> dims;
  dims.reserve(shape.size());
  int64_t numel = 1;
  for (const SymExpr& d : shape) {
    auto v = d.AsInt();
    if (!v.has_value() || *v < 0) return std::nullopt;
    dims.push_back(*v);
    numel *= *v;
    if (numel > kMaxValueElements) return std::nullopt;
  }
  return dims;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

bool BroadcastsTo(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  if (in.size() > out.size()) return false;
  const size_t offset = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k] != 1 && in[k] != out[offset + k]) return false;
  }
  return true;
}

std::vector<int64_t> BroadcastIndexMap(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  int64_t numel = 1;
  for (int64_t d : out) numel *= d;
  const std::vector<int64_t> in_strides = RowMajorStrides(in);
  const size_t offset = out.size() - in.size();
  std::vector<int64_t> map(static_cast<size_t>(numel), 0);
  std::vector<int64_t> index(out.size(), 0);
  for (int64_t flat = 0; flat < numel; ++flat) {
    int64_t src = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      const int64_t i = in[k] == 1 ? 0 : index[offset + k];
      src += i * in_strides[k];
    }
    map[static_cast<size_t>(flat)] = src;
    for (size_t k = out.size(); k-- > 0;) {  // increment the multi-index
      if (++index[k] < out[k]) break;
      index[k] = 0;
    }
  }
  return map;
}

bool KnownNonNegative(const SymExpr& e) {
  if (auto r = e.AsRational(); r.has_value()) return r->num >= 0;
  if (e.ToString().find('-') == std::string::npos) return true;
  if (!e.IsPolynomial()) return false;
  // Every monomial is >= 1 when every dim is: c + sum(a_i m_i) >= c + sum(a_i) when all a_i >= 0.
  DimBindings zeros, ones;
  for (const std::string& s : e.Symbols()) {
    zeros.Set(s, 0);
    ones.Set(s, 1);
  }
  auto constant = e.Evaluate(zeros);
  auto at_ones = e.Evaluate(ones);
  if (!constant.ok() || !at_ones.ok() || at_ones->num < 0) return false;
  return (e - SymExpr(*constant)).ToString().find('-') == std::string::npos;
}

bool TracksValues(DataType t) { return IsInteger(t) || t == DataType::kBool || IsFloatingPoint(t); }

}  // namespace memopt::shape
