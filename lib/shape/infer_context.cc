#include "shape/infer_context.h"

#include <cstring>
#include <limits>

namespace memopt::shape {

namespace {

const std::string& EmptyString() {
  static const std::string kEmpty;
  return kEmpty;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// BroadcastNotes

void BroadcastNotes::Record(const SymExpr& result, const SymExpr& a, const SymExpr& b) {
  ambiguous_.emplace(result, std::make_pair(a, b));
}

bool BroadcastNotes::Admits(const SymExpr& dim, const SymExpr& candidate) const {
  // Iterative walk over the operand tree (its depth is bounded by the number of broadcasts).
  std::vector<SymExpr> stack{dim};
  int budget = 64;
  while (!stack.empty() && budget-- > 0) {
    SymExpr e = stack.back();
    stack.pop_back();
    if (e == candidate) return true;
    auto it = ambiguous_.find(e);
    if (it == ambiguous_.end()) continue;
    stack.push_back(it->second.first);
    stack.push_back(it->second.second);
  }
  return false;
}

void BroadcastNotes::RecordMin(const SymExpr& result, const SymExpr& a, const SymExpr& b) {
  if (!(result == a) && !(result == b)) mins_.emplace(result, std::make_pair(a, b));
}

bool BroadcastNotes::IsMinOf(const SymExpr& dim, const SymExpr& operand) const {
  auto it = mins_.find(dim);
  return it != mins_.end() && (it->second.first == operand || it->second.second == operand);
}

// ---------------------------------------------------------------------------------------------
// InferContext

InferContext::InferContext(Graph& graph, Node& node, InferState& state)
    : graph_(graph), node_(node), state_(state) {}

int64_t InferContext::opset() const {
  if (node_.since_version > 0) return node_.since_version;
  return graph_.OpsetVersion(node_.domain);
}

const std::string& InferContext::InputName(size_t i) const {
  const Value* v = InputValue(i);
  return v == nullptr ? EmptyString() : v->name;
}

const Value* InferContext::InputValue(size_t i) const {
  if (!HasInput(i)) return nullptr;
  return &graph_.value(node_.inputs[i]);
}

DataType InferContext::InputType(size_t i) const {
  const Value* v = InputValue(i);
  return v == nullptr ? DataType::kUndefined : v->info.dtype;
}

const Shape* InferContext::InputShape(size_t i) const {
  const Value* v = InputValue(i);
  if (v == nullptr || !v->info.shape.has_value()) return nullptr;
  return &*v->info.shape;
}

std::optional<int64_t> InferContext::InputRank(size_t i) const {
  const Shape* s = InputShape(i);
  if (s == nullptr) return std::nullopt;
  return static_cast<int64_t>(s->size());
}

const std::vector<SymExpr>* InferContext::InputValues(size_t i) const {
  const Value* v = InputValue(i);
  if (v == nullptr || !v->known_values.has_value()) return nullptr;
  return &*v->known_values;
}

std::optional<std::vector<int64_t>> InferContext::InputInts(size_t i) const {
  const std::vector<SymExpr>* values = InputValues(i);
  if (values == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(values->size());
  for (const SymExpr& e : *values) {
    auto v = e.AsInt();
    if (!v.has_value()) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

const std::string& InferContext::OutputName(size_t i) const {
  if (!HasOutput(i)) return EmptyString();
  return graph_.value(node_.outputs[i]).name;
}

const TensorInfo& InferContext::OutputInfo(size_t i) const {
  static const TensorInfo kEmpty;
  if (!HasOutput(i)) return kEmpty;
  return graph_.value(node_.outputs[i]).info;
}

void InferContext::SetOutput(size_t i, DataType dtype, std::optional<Shape> shape) {
  if (!HasOutput(i)) return;
  TensorInfo& info = graph_.value(node_.outputs[i]).info;
  info.dtype = dtype;
  info.shape = std::move(shape);
}

void InferContext::CopyInputToOutput(size_t in, size_t out) {
  if (!HasOutput(out)) return;
  const Value* v = InputValue(in);
  if (v == nullptr) return;
  TensorInfo& info = graph_.value(node_.outputs[out]).info;
  info.dtype = v->info.dtype;
  info.shape = v->info.shape;
  info.is_tensor = v->info.is_tensor;
}

void InferContext::SetOutputValues(size_t i, std::vector<SymExpr> values) {
  if (!HasOutput(i)) return;
  graph_.value(node_.outputs[i]).known_values = std::move(values);
}

SymExpr InferContext::FreshDim(size_t out, size_t dim, const std::string& reason) {
  return DataDependentDim(out, dim, "unk", reason);
}

SymExpr InferContext::DataDependentDim(size_t out, size_t dim, const std::string& kind, const std::string& reason) {
  std::string name = kind + "__" + std::to_string(state_.next_fresh++);
  fresh_names_.insert(name);
  ShapeDiagnostic d;
  d.node = node_.id;
  d.tensor = OutputName(out);
  d.message = "dim " + std::to_string(dim) + " of '" + d.tensor + "' unresolved: " + reason +
              " (now " + name + ")";
  state_.diagnostics.push_back(std::move(d));
  return SymExpr::Symbol(name);
}

std::optional<Shape> InferContext::FreshShape(size_t out, size_t rank, const std::string& reason) {
  if (rank > kMaxFreshRank) {
    Diagnose(OutputName(out), "rank unresolved: " + reason + ", and the rank it implies (" + std::to_string(rank) +
                                  ") is past " + std::to_string(kMaxFreshRank));
    return std::nullopt;
  }
  Shape s;
  s.reserve(rank);
  for (size_t k = 0; k < rank; ++k) s.push_back(FreshDim(out, k, reason));
  return s;
}

void InferContext::Diagnose(const std::string& tensor, const std::string& message) {
  ShapeDiagnostic d;
  d.node = node_.id;
  d.tensor = tensor;
  d.message = message;
  state_.diagnostics.push_back(std::move(d));
}

void InferContext::RequireEqualDims(const SymExpr& a, const SymExpr& b) {
  const SymExpr* sym = &a;
  auto value = b.AsInt();
  if (!value.has_value()) {
    sym = &b;
    value = a.AsInt();
  }
  if (!value.has_value() || sym->IsConstant()) return;
  const std::vector<std::string> names = sym->Symbols();
  if (names.size() != 1 || !(*sym == SymExpr::Symbol(names[0]))) return;
  if (!state_.learned.Get(names[0]).has_value()) state_.learned.Set(names[0], *value);
}

Status InferContext::Error(const std::string& message) const {
  return InvalidInput("node " + node_.Describe() + ": " + message);
}

const TensorInfo* InferContext::DeclaredOutput(size_t i) const {
  if (declared_ == nullptr || !HasOutput(i)) return nullptr;
  const TensorInfo& t = (*declared_)[node_.outputs[i]];
  if (t.dtype == DataType::kUndefined && !t.shape.has_value()) return nullptr;
  return &t;
}

// ---------------------------------------------------------------------------------------------
// Helpers

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return axis;
}

std::string IntsToString(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

IntListArg ReadIntList(const InferContext& ctx, const std::string& attr, size_t input) {
  IntListArg arg;
  if (ctx.node().HasAttr(attr)) {
    arg.present = true;
    arg.values = ctx.node().GetInts(attr);
    arg.length = static_cast<int64_t>(arg.values->size());
    return arg;
  }
  if (!ctx.HasInput(input)) return arg;
  arg.present = true;
  arg.values = ctx.InputInts(input);
  if (arg.values.has_value()) {
    arg.length = static_cast<int64_t>(arg.values->size());
  } else if (const Shape* s = ctx.InputShape(input); s != nullptr) {
    if (s->empty()) {
      arg.length = 1;
    } else if (s->size() == 1) {
      arg.length = (*s)[0].AsInt();
    }
  }
  return arg;
}

namespace {

/// Clamps start/end of a Slice over a dim of constant length `dim` (ONNX Slice-10+ rules).
void NormalizeSliceBounds(int64_t dim, int64_t& start, int64_t& end, int64_t step) {
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
  // Adding dim to a very negative bound must not overflow.
  if (start < 0) start = start < -dim ? -dim - 1 : start + dim;
  if (end < 0) end = end < -dim ? -dim - 1 : end + dim;
  if (step > 0) {
    start = clamp(start, 0, dim);
    end = clamp(end, 0, dim);
  } else {
    start = clamp(start, -1, dim - 1);
    end = clamp(end, -1, dim - 1);
  }
}

int64_t SliceLength(int64_t dim, int64_t start, int64_t end, int64_t step) {
  NormalizeSliceBounds(dim, start, end, step);
  if (step > 0) return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

}  // namespace

std::vector<int64_t> SliceIndices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  std::vector<int64_t> out;
  if (step == 0 || dim < 0) return out;
  NormalizeSliceBounds(dim, start, end, step);
  if (step > 0) {
    for (int64_t i = start; i < end; i += step) out.push_back(i);
  } else {
    for (int64_t i = start; i > end; i += step) out.push_back(i);
  }
  return out;
}

SymExpr SlicedDim(const SymExpr& dim, const SymExpr& start, const SymExpr& end, int64_t step) {
  const auto d = dim.AsInt();
  const auto s = start.AsInt();
  const auto e = end.AsInt();
  if (step == 0) return SymExpr(0);
  if (d.has_value() && s.has_value() && e.has_value() && *d >= 0) return SymExpr(SliceLength(*d, *s, *e, step));
  SymExpr lo;
  SymExpr hi;
  if (step > 0) {
    if (!s.has_value()) lo = start;
    else if (*s <= -kSliceToEnd) lo = SymExpr(0);
    else if (*s < 0) lo = dim + SymExpr(*s);
    else if (*s >= kSliceToEnd) lo = dim;
    else lo = SymExpr(*s);
    if (!e.has_value()) hi = end;
    else if (*e >= kSliceToEnd) hi = dim;
    else if (*e <= -kSliceToEnd) hi = SymExpr(0);
    else if (*e < 0) hi = dim + SymExpr(*e);
    else hi = SymExpr(*e);
    SymExpr len = step == 1 ? hi - lo : SymExpr::CeilDiv(hi - lo, SymExpr(step));
    if (auto c = len.AsInt(); c.has_value() && *c < 0) return SymExpr(0);
    return len;
  }
  if (!s.has_value()) hi = start;
  else if (*s >= kSliceToEnd) hi = dim - SymExpr(1);
  else if (*s <= -kSliceToEnd) hi = SymExpr(-1);
  else if (*s < 0) hi = dim + SymExpr(*s);
  else hi = SymExpr(*s);
  if (!e.has_value()) lo = end;
  else if (*e <= -kSliceToEnd) lo = SymExpr(-1);
  else if (*e >= kSliceToEnd) lo = dim - SymExpr(1);
  else if (*e < 0) lo = dim + SymExpr(*e);
  else lo = SymExpr(*e);
  SymExpr len = step == -1 ? hi - lo : SymExpr::CeilDiv(hi - lo, SymExpr(-step));
  if (auto c = len.AsInt(); c.has_value() && *c < 0) return SymExpr(0);
  return len;
}

std::optional<SymExpr> IntegerQuotient(const SymExpr& a, const SymExpr& b) {
  auto q = SymExpr::DivExact(a, b);
  // FloorDiv returns the plain quotient exactly when it has integer coefficients.
  if (!q.has_value() || !(SymExpr::FloorDiv(a, b) == *q)) return std::nullopt;
  return q;
}

SymExpr DivideDims(const SymExpr& a, const SymExpr& b) {
  auto q = IntegerQuotient(a, b);
  return q.has_value() ? *q : SymExpr::FloorDiv(a, b);
}

SymExpr ProductOfDims(const Shape& shape, size_t begin, size_t end) {
  SymExpr p(1);
  for (size_t i = begin; i < end && i < shape.size(); ++i) p = p * shape[i];
  return p;
}

Shape TensorProtoShape(const onnx::TensorProto& tensor) {
  Shape s;
  for (int64_t d : tensor.dims()) s.emplace_back(d);
  return s;
}

namespace {

int64_t TensorNumel(const onnx::TensorProto& tensor) {
  int64_t n = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0) return -1;
    if (d != 0 && n > (int64_t{1} << 40) / d) return -1;
    n *= d;
  }
  return n;
}

template <typename T>
T ReadLittleEndian(const std::string& raw, size_t index) {
  T v{};
  std::memcpy(&v, raw.data() + index * sizeof(T), sizeof(T));
  return v;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  float value;
  if (exp == 0) {
    value = static_cast<float>(mant) / 1024.0f / 16384.0f;  // subnormal: mant * 2^-24
  } else if (exp == 31) {
    value = mant == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else {
    value = (1.0f + static_cast<float>(mant) / 1024.0f);
    int e = static_cast<int>(exp) - 15;
    while (e > 0) { value *= 2.0f; --e; }
    while (e < 0) { value /= 2.0f; ++e; }
  }
  return sign ? -value : value;
}

}  // namespace

std::optional<std::vector<int64_t>> DecodeIntTensor(const onnx::TensorProto& tensor,
                                                    int64_t max_elements) {
  const int64_t n = TensorNumel(tensor);
  if (n < 0 || n > max_elements) return std::nullopt;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  const auto type = static_cast<DataType>(tensor.data_type());
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  const std::string& raw = tensor.raw_data();
  const bool has_raw = tensor.has_raw_data();
  auto size_ok = [&](size_t elem) { return raw.size() >= static_cast<size_t>(n) * elem; };
  switch (type) {
    case DataType::kInt64:
      if (has_raw) {
        if (!size_ok(8)) return std::nullopt;
        for (int64_t i = 0; i < n; ++i) out.push_back(ReadLittleEndian<int64_t>(raw, i));
      } else {
        if (tensor.int64_data_size() != n) return std::nullopt;
        out.assign(tensor.int64_data().begin(), tensor.int64_data().end());
      }
      return out;
    case DataType::kUint64:
      if (has_raw) {
        if (!size_ok(8)) return std::nullopt;
        for (int64_t i = 0; i < n; ++i) out.push_back(static_cast<int64_t>(ReadLittleEndian<uint64_t>(raw, i)));
      } else {
        if (tensor.uint64_data_size() != n) return std::nullopt;
        for (uint64_t v : tensor.uint64_data()) out.push_back(static_cast<int64_t>(v));
      }
      return out;
    case DataType::kInt32: case DataType::kInt16: case DataType::kInt8: case DataType::kUint16:
    case DataType::kUint8: case DataType::kBool: case DataType::kUint32: {
      if (has_raw) {
        const size_t elem = static_cast<size_t>(ElemByteSize(type));
        if (!size_ok(elem)) return std::nullopt;
        for (int64_t i = 0; i < n; ++i) {
          switch (type) {
            case DataType::kInt32: out.push_back(ReadLittleEndian<int32_t>(raw, i)); break;
            case DataType::kUint32: out.push_back(ReadLittleEndian<uint32_t>(raw, i)); break;
            case DataType::kInt16: out.push_back(ReadLittleEndian<int16_t>(raw, i)); break;
            case DataType::kUint16: out.push_back(ReadLittleEndian<uint16_t>(raw, i)); break;
            case DataType::kInt8: out.push_back(ReadLittleEndian<int8_t>(raw, i)); break;
            default: out.push_back(ReadLittleEndian<uint8_t>(raw, i)); break;
          }
        }
      } else if (type == DataType::kUint32) {
        if (tensor.uint64_data_size() != n) return std::nullopt;
        for (uint64_t v : tensor.uint64_data()) out.push_back(static_cast<int64_t>(v));
      } else {
        if (tensor.int32_data_size() != n) return std::nullopt;
        out.assign(tensor.int32_data().begin(), tensor.int32_data().end());
      }
      return out;
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::vector<double>> DecodeFloatTensor(const onnx::TensorProto& tensor,
                                                     int64_t max_elements) {
  const int64_t n = TensorNumel(tensor);
  if (n < 0 || n > max_elements) return std::nullopt;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  const auto type = static_cast<DataType>(tensor.data_type());
  const std::string& raw = tensor.raw_data();
  const bool has_raw = tensor.has_raw_data();
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n));
  switch (type) {
    case DataType::kFloat:
      if (has_raw) {
        if (raw.size() < static_cast<size_t>(n) * 4) return std::nullopt;
        for (int64_t i = 0; i < n; ++i) out.push_back(ReadLittleEndian<float>(raw, i));
      } else {
        if (tensor.float_data_size() != n) return std::nullopt;
        out.assign(tensor.float_data().begin(), tensor.float_data().end());
      }
      return out;
    case DataType::kDouble:
      if (has_raw) {
        if (raw.size() < static_cast<size_t>(n) * 8) return std::nullopt;
        for (int64_t i = 0; i < n; ++i) out.push_back(ReadLittleEndian<double>(raw, i));
      } else {
        if (tensor.double_data_size() != n) return std::nullopt;
        out.assign(tensor.double_data().begin(), tensor.double_data().end());
      }
      return out;
    case DataType::kFloat16:
      if (has_raw) {
        if (raw.size() < static_cast<size_t>(n) * 2) return std::nullopt;
        for (int64_t i = 0; i < n; ++i) out.push_back(HalfToFloat(ReadLittleEndian<uint16_t>(raw, i)));
      } else {
        if (tensor.int32_data_size() != n) return std::nullopt;
        for (int32_t v : tensor.int32_data()) out.push_back(HalfToFloat(static_cast<uint16_t>(v)));
      }
      return out;
    default: {
      auto ints = DecodeIntTensor(tensor, max_elements);
      if (!ints.has_value()) return std::nullopt;
      for (int64_t v : *ints) out.push_back(static_cast<double>(v));
      return out;
    }
  }
}

}  // namespace memopt::shape
