#include "ops/recurrent/recurrent_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <type_traits>

#include "exec/kernels/float_range.h"
#include "exec/math/vector_math.h"
#include "util/half.h"

namespace memopt::recurrent {
namespace {

using Kind = Activation::Kind;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct ActivationName {
  const char* name;
  Kind kind;
  bool alpha, beta;
  double default_alpha, default_beta;
};

constexpr ActivationName kActivations[] = {
    {"sigmoid", Kind::kSigmoid, false, false, 0, 0},
    {"tanh", Kind::kTanh, false, false, 0, 0},
    {"relu", Kind::kRelu, false, false, 0, 0},
    {"affine", Kind::kAffine, true, true, 1.0, 0.0},
    {"leakyrelu", Kind::kLeakyRelu, true, false, 0.01, 0},
    {"thresholdedrelu", Kind::kThresholdedRelu, true, false, 1.0, 0},
    {"scaledtanh", Kind::kScaledTanh, true, true, 1.0, 1.0},
    {"hardsigmoid", Kind::kHardSigmoid, true, true, 0.2, 0.5},
    {"elu", Kind::kElu, true, false, 1.0, 0},
    {"softsign", Kind::kSoftsign, false, false, 0, 0},
    {"softplus", Kind::kSoftplus, false, false, 0, 0},
};

double Sigmoid(double a) { return 1.0 / (1.0 + std::exp(-a)); }

Expected<std::vector<std::vector<Activation>>> DecodeActivations(const KernelContext& ctx, Cell cell, int64_t dirs) {
  const Node& node = *ctx.node;
  const size_t per_dir = cell == Cell::kLstm ? 3 : cell == Cell::kGru ? 2 : 1;
  std::vector<std::string> names;
  for (const auto& a : node.proto.attribute()) {
    if (a.name() == "activations") names.assign(a.strings().begin(), a.strings().end());
  }
  if (names.empty()) {
    names = cell == Cell::kLstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
            : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                 : std::vector<std::string>{"Tanh"};
    if (dirs == 2) {
      const std::vector<std::string> one = names;
      names.insert(names.end(), one.begin(), one.end());
    }
  }
  if (names.size() != per_dir * static_cast<size_t>(dirs)) {
    return ctx.Error("activations has " + std::to_string(names.size()) + " entries, expected " +
                     std::to_string(per_dir * dirs) + " (" + std::to_string(per_dir) + " per direction)");
  }
  std::vector<float> alphas, betas;
  for (const auto& a : node.proto.attribute()) {
    if (a.name() == "activation_alpha") alphas.assign(a.floats().begin(), a.floats().end());
    if (a.name() == "activation_beta") betas.assign(a.floats().begin(), a.floats().end());
  }
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<Activation>> out(static_cast<size_t>(dirs));
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string lower = Lower(names[i]);
    const ActivationName* found = nullptr;
    for (const ActivationName& a : kActivations) {
      if (lower == a.name) found = &a;
    }
    if (found == nullptr) return ctx.Error("unknown activation '" + names[i] + "'");
    Activation act;
    act.kind = found->kind;
    act.alpha = found->alpha && next_alpha < alphas.size() ? alphas[next_alpha++] : found->default_alpha;
    act.beta = found->beta && next_beta < betas.size() ? betas[next_beta++] : found->default_beta;
    out[i / per_dir].push_back(act);
  }
  return out;
}

}  // namespace

double Activation::Apply(double a) const {
  switch (kind) {
    case Kind::kSigmoid: return Sigmoid(a);
    case Kind::kTanh: return std::tanh(a);
    case Kind::kRelu: return std::max(0.0, a);
    case Kind::kAffine: return alpha * a + beta;
    case Kind::kLeakyRelu: return a >= 0.0 ? a : alpha * a;
    case Kind::kThresholdedRelu: return a > alpha ? a : 0.0;
    case Kind::kScaledTanh: return alpha * std::tanh(beta * a);
    case Kind::kHardSigmoid: return std::clamp(alpha * a + beta, 0.0, 1.0);
    case Kind::kElu: return a >= 0.0 ? a : alpha * (std::exp(a) - 1.0);
    case Kind::kSoftsign: return a / (1.0 + std::abs(a));
    case Kind::kSoftplus: return std::log1p(std::exp(-std::abs(a))) + std::max(a, 0.0);
  }
  return a;
}

double Activation::Derivative(double a, double y) const {
  switch (kind) {
    case Kind::kSigmoid: return y * (1.0 - y);
    case Kind::kTanh: return 1.0 - y * y;
    case Kind::kRelu: return a > 0.0 ? 1.0 : 0.0;
    case Kind::kAffine: return alpha;
    case Kind::kLeakyRelu: return a >= 0.0 ? 1.0 : alpha;
    case Kind::kThresholdedRelu: return a > alpha ? 1.0 : 0.0;
    case Kind::kScaledTanh: {
      const double t = std::tanh(beta * a);
      return alpha * beta * (1.0 - t * t);
    }
    case Kind::kHardSigmoid: {
      const double v = alpha * a + beta;
      return v > 0.0 && v < 1.0 ? alpha : 0.0;
    }
    case Kind::kElu: return a >= 0.0 ? 1.0 : y + alpha;
    case Kind::kSoftsign: return 1.0 / ((1.0 + std::abs(a)) * (1.0 + std::abs(a)));
    case Kind::kSoftplus: return Sigmoid(a);
  }
  return 1.0;
}

template <typename C>
void Activation::ApplyArray(const C* a, C* y, int64_t n) const {
  if constexpr (std::is_same_v<C, float>) {
    if (kind == Kind::kTanh) {
      math::TanhArray(a, y, n);
      return;
    }
    if (kind == Kind::kSigmoid) {  // 1 / (1 + exp(-a)), the exp in vector form
      for (int64_t i = 0; i < n; ++i) y[i] = -a[i];
      math::ExpArray(y, y, n);
      for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + y[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<C>(Apply(static_cast<double>(a[i])));
}
template void Activation::ApplyArray<float>(const float*, float*, int64_t) const;
template void Activation::ApplyArray<double>(const double*, double*, int64_t) const;

Cell CellOf(const std::string& op_type) {
  if (op_type.find("LSTM") != std::string::npos) return Cell::kLstm;
  if (op_type.find("GRU") != std::string::npos) return Cell::kGru;
  return Cell::kRnn;
}

Expected<RecurrentSetup> DecodeRecurrent(const KernelContext& ctx, Cell cell) {
  RecurrentSetup s;
  s.cell = cell;
  s.gates = cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1;
  const Node& node = *ctx.node;
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2)) return ctx.Error("needs X, W and R");
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& r = ctx.input(2);
  s.batch_first = node.GetInt("layout", 0) != 0;
  if (x.rank() != 3) return ctx.Error("X " + x.Describe() + " must have rank 3");
  s.seq = x.dim(s.batch_first ? 1 : 0);
  s.batch = x.dim(s.batch_first ? 0 : 1);
  s.input = x.dim(2);
  const std::string direction = node.GetString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ctx.Error("unknown direction '" + direction + "' (forward, reverse or bidirectional)");
  }
  s.dirs = direction == "bidirectional" ? 2 : 1;
  s.reverse_only = direction == "reverse";
  const int64_t g = s.gates;
  if (w.rank() != 3 || w.dim(0) != s.dirs || w.dim(2) != s.input || w.dim(1) % g != 0) {
    return ctx.Error("W " + w.Describe() + " must be [" + std::to_string(s.dirs) + ", " + std::to_string(g) +
                     " * hidden_size, " + std::to_string(s.input) + "]");
  }
  s.hidden = node.HasAttr("hidden_size") ? node.GetInt("hidden_size", 0) : w.dim(1) / g;
  const int64_t gh = g * s.hidden;
  if (s.hidden <= 0 || w.dim(1) != gh) {
    return ctx.Error("W " + w.Describe() + " does not hold " + std::to_string(g) + " gates of hidden_size " +
                     std::to_string(s.hidden));
  }
  if (r.shape() != std::vector<int64_t>{s.dirs, gh, s.hidden}) {
    return ctx.Error("R " + r.Describe() + " must be " + ShapeToString(std::vector<int64_t>{s.dirs, gh, s.hidden}));
  }
  if (ctx.has_input(3) && ctx.input(3).shape() != std::vector<int64_t>{s.dirs, 2 * gh}) {
    return ctx.Error("B " + ctx.input(3).Describe() + " must be " + ShapeToString(std::vector<int64_t>{s.dirs, 2 * gh}));
  }
  s.lengths.assign(static_cast<size_t>(s.batch), s.seq);
  if (ctx.has_input(4)) {
    const Tensor& lens = ctx.input(4);
    if (lens.numel() != s.batch) {
      return ctx.Error("sequence_lens " + lens.Describe() + " must have one entry per batch entry (" +
                       std::to_string(s.batch) + ")");
    }
    for (int64_t b = 0; b < s.batch; ++b) {
      const auto len = static_cast<int64_t>(lens.GetAsDouble(b));
      if (len < 0 || len > s.seq) {
        return ctx.Error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) + " is outside [0, " +
                         std::to_string(s.seq) + "]");
      }
      s.lengths[b] = len;
    }
  }
  const std::vector<int64_t> state = StateShape(s);
  for (int i : {5, 6}) {
    if (i == 6 && cell != Cell::kLstm) break;
    if (ctx.has_input(i) && ctx.input(i).shape() != state) {
      return ctx.Error(std::string(i == 5 ? "initial_h " : "initial_c ") + ctx.input(i).Describe() + " must be " +
                       ShapeToString(state));
    }
  }
  if (cell == Cell::kLstm && ctx.has_input(7) && ctx.input(7).shape() != std::vector<int64_t>{s.dirs, 3 * s.hidden}) {
    return ctx.Error("P " + ctx.input(7).Describe() + " must be " + ShapeToString(std::vector<int64_t>{s.dirs, 3 * s.hidden}));
  }
  if (node.HasAttr("clip")) {
    s.clip = node.GetFloat("clip", 0.0f);
    if (!(s.clip > 0.0)) return ctx.Error("clip must be positive");
  }
  s.input_forget = cell == Cell::kLstm && node.GetInt("input_forget", 0) != 0;
  s.linear_before_reset = cell == Cell::kGru && node.GetInt("linear_before_reset", 0) != 0;
  MEMOPT_ASSIGN_OR_RETURN(s.activations, DecodeActivations(ctx, cell, s.dirs));
  return s;
}

template <>
RoundFn<float> RoundingFor<float>(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16: return [](float v) { return Float16ToFloat(FloatToFloat16(v)); };
    case DataType::kBfloat16: return [](float v) { return Bfloat16ToFloat(FloatToBfloat16(v)); };
    default: return [](float v) { return v; };
  }
}

template <>
RoundFn<double> RoundingFor<double>(DataType) {
  return [](double v) { return v; };  // the engine computes in double only for double tensors
}

std::vector<int64_t> YShape(const RecurrentSetup& s) {
  return s.batch_first ? std::vector<int64_t>{s.batch, s.seq, s.dirs, s.hidden}
                       : std::vector<int64_t>{s.seq, s.dirs, s.batch, s.hidden};
}

std::vector<int64_t> StateShape(const RecurrentSetup& s) {
  return s.batch_first ? std::vector<int64_t>{s.batch, s.dirs, s.hidden} : std::vector<int64_t>{s.dirs, s.batch, s.hidden};
}

template <typename C>
std::vector<C> StateOf(const KernelContext& ctx, const RecurrentSetup& s, int input, int64_t d) {
  std::vector<C> v;
  if (!ctx.has_input(input)) return v;
  const Tensor& t = ctx.input(input);
  v.resize(static_cast<size_t>(s.batch * s.hidden));
  for (int64_t b = 0; b < s.batch; ++b) ConvertRange(t, StateOffset(s, d, b), s.hidden, v.data() + b * s.hidden);
  return v;
}

template <typename C>
void StoreState(const std::vector<C>& v, const RecurrentSetup& s, int64_t d, Tensor& t) {
  for (int64_t b = 0; b < s.batch; ++b) StoreRange(v.data() + b * s.hidden, s.hidden, t, StateOffset(s, d, b));
}

template <typename C>
ReadRow<C> SequenceRows(const Tensor& t, const RecurrentSetup& s, int64_t d) {
  const int64_t n = d < 0 ? s.input : s.hidden;
  return [&t, s, d, n](int64_t time, int64_t b, C* row) {
    ConvertRange(t, d < 0 ? XOffset(s, time, b) : YOffset(s, time, d, b), n, row);
  };
}

template <typename C>
WriteRow<C> ToSequenceRows(Tensor& t, const RecurrentSetup& s, int64_t d) {
  const int64_t n = d < 0 ? s.input : s.hidden;
  return [&t, s, d, n](int64_t time, int64_t b, const C* row) {
    StoreRange(row, n, t, d < 0 ? XOffset(s, time, b) : YOffset(s, time, d, b));
  };
}

template <typename C>
DirectionInputs<C> DirectionOf(const KernelContext& ctx, const RecurrentSetup& s, int64_t d) {
  DirectionInputs<C> in;
  in.x = SequenceRows<C>(ctx.input(0), s, -1);
  const int64_t gh = s.gates * s.hidden, h = s.hidden;
  auto slice = [&](int i, int64_t offset, int64_t count) {
    std::vector<C> v(static_cast<size_t>(count), C(0));
    if (ctx.has_input(i)) ConvertRange(ctx.input(i), offset, count, v.data());
    return v;
  };
  in.w = slice(1, d * gh * s.input, gh * s.input);
  in.r = slice(2, d * gh * h, gh * h);
  in.wb = slice(3, d * 2 * gh, gh);
  in.rb = slice(3, d * 2 * gh + gh, gh);
  if (s.cell == Cell::kLstm) in.p = slice(7, d * 3 * h, 3 * h);
  auto state = [&](int i) {  // an absent initial state is zeros
    std::vector<C> v = StateOf<C>(ctx, s, i, d);
    if (v.empty()) v.assign(static_cast<size_t>(s.batch * h), C(0));
    return v;
  };
  in.h0 = state(5);
  if (s.cell == Cell::kLstm) in.c0 = state(6);
  PreparePanels(s, in);
  return in;
}

#define MEMOPT_RECURRENT_IO(C)                                                                            \
  template std::vector<C> StateOf<C>(const KernelContext&, const RecurrentSetup&, int, int64_t);         \
  template void StoreState<C>(const std::vector<C>&, const RecurrentSetup&, int64_t, Tensor&);           \
  template ReadRow<C> SequenceRows<C>(const Tensor&, const RecurrentSetup&, int64_t);                    \
  template WriteRow<C> ToSequenceRows<C>(Tensor&, const RecurrentSetup&, int64_t);                       \
  template DirectionInputs<C> DirectionOf<C>(const KernelContext&, const RecurrentSetup&, int64_t);
MEMOPT_RECURRENT_IO(float)
MEMOPT_RECURRENT_IO(double)
#undef MEMOPT_RECURRENT_IO

}  // namespace memopt::recurrent
