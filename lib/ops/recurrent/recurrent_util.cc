#include "ops/recurrent/recurrent_util.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "exec/kernels/kernel_util.h"
#include "util/half.h"

namespace memopt::recurrent {
namespace {

using Kind = Activation::Kind;

/// Bytes a segment of steps holds at most in the backward's trace and gradients (SegmentSteps).
constexpr int64_t kSegmentBytes = int64_t{2} << 20;

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

double Clipped(const RecurrentSetup& s, double a) { return s.clip > 0.0 ? std::clamp(a, -s.clip, s.clip) : a; }

/// d act(clip(a)) / d a.
double GateDerivative(const RecurrentSetup& s, const Activation& act, double a, double y) {
  if (s.clip > 0.0 && std::abs(a) > s.clip) return 0.0;
  return act.Derivative(a, y);
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

RoundFn RoundingFor(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return [](double v) { return static_cast<double>(static_cast<float>(v)); };
    case DataType::kFloat16: return [](double v) { return static_cast<double>(Float16ToFloat(FloatToFloat16(static_cast<float>(v)))); };
    case DataType::kBfloat16:
      return [](double v) { return static_cast<double>(Bfloat16ToFloat(FloatToBfloat16(static_cast<float>(v)))); };
    default: return [](double v) { return v; };
  }
}

std::vector<int64_t> YShape(const RecurrentSetup& s) {
  return s.batch_first ? std::vector<int64_t>{s.batch, s.seq, s.dirs, s.hidden}
                       : std::vector<int64_t>{s.seq, s.dirs, s.batch, s.hidden};
}

std::vector<int64_t> StateShape(const RecurrentSetup& s) {
  return s.batch_first ? std::vector<int64_t>{s.batch, s.dirs, s.hidden} : std::vector<int64_t>{s.dirs, s.batch, s.hidden};
}

std::vector<double> StateOf(const KernelContext& ctx, const RecurrentSetup& s, int input, int64_t d) {
  std::vector<double> v;
  if (!ctx.has_input(input)) return v;
  const Tensor& t = ctx.input(input);
  v.resize(static_cast<size_t>(s.batch * s.hidden));
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t src = StateOffset(s, d, b);
    for (int64_t k = 0; k < s.hidden; ++k) v[b * s.hidden + k] = t.GetAsDouble(src + k);
  }
  return v;
}

ReadRow SequenceRows(const Tensor& t, const RecurrentSetup& s, int64_t d) {
  const int64_t n = d < 0 ? s.input : s.hidden;
  return [&t, s, d, n](int64_t time, int64_t b, double* row) {
    const int64_t src = d < 0 ? XOffset(s, time, b) : YOffset(s, time, d, b);
    for (int64_t i = 0; i < n; ++i) row[i] = t.GetAsDouble(src + i);
  };
}

WriteRow ToSequenceRows(Tensor& t, const RecurrentSetup& s, int64_t d) {
  const int64_t n = d < 0 ? s.input : s.hidden;
  return [&t, s, d, n](int64_t time, int64_t b, const double* row) {
    const int64_t dst = d < 0 ? XOffset(s, time, b) : YOffset(s, time, d, b);
    for (int64_t i = 0; i < n; ++i) t.SetFromDouble(dst + i, row[i]);
  };
}

DirectionInputs DirectionOf(const KernelContext& ctx, const RecurrentSetup& s, int64_t d) {
  DirectionInputs in;
  in.x = SequenceRows(ctx.input(0), s, -1);
  const int64_t gh = s.gates * s.hidden, h = s.hidden;
  auto slice = [&](int i, int64_t offset, int64_t count) {
    std::vector<double> v(static_cast<size_t>(count), 0.0);
    if (!ctx.has_input(i)) return v;
    const Tensor& t = ctx.input(i);
    for (int64_t k = 0; k < count; ++k) v[k] = t.GetAsDouble(offset + k);
    return v;
  };
  in.w = slice(1, d * gh * s.input, gh * s.input);
  in.r = slice(2, d * gh * h, gh * h);
  in.wb = slice(3, d * 2 * gh, gh);
  in.rb = slice(3, d * 2 * gh + gh, gh);
  if (s.cell == Cell::kLstm) in.p = slice(7, d * 3 * h, 3 * h);
  auto state = [&](int i) {  // an absent initial state is zeros
    std::vector<double> v = StateOf(ctx, s, i, d);
    if (v.empty()) v.assign(static_cast<size_t>(s.batch * h), 0.0);
    return v;
  };
  in.h0 = state(5);
  if (s.cell == Cell::kLstm) in.c0 = state(6);
  return in;
}

int64_t TimeOf(const RecurrentSetup& s, int64_t d, int64_t step, int64_t b) {
  return Reverse(s, d) ? s.lengths[b] - 1 - step : step;
}

int64_t SegmentSteps(const RecurrentSetup& s) {
  const int64_t per_step = s.batch * 8 * (5 * s.gates * s.hidden + 5 * s.hidden + s.input);
  return std::clamp<int64_t>(kSegmentBytes / std::max<int64_t>(per_step, 1), 1, std::max<int64_t>(s.seq, 1));
}

void RunSteps(const RecurrentSetup& s, const DirectionInputs& in, int64_t d, RoundFn round, int64_t first,
              int64_t last, DirectionOutputs& out, DirectionTrace* trace) {
  const int64_t H = s.hidden, GH = s.gates * H, B = s.batch, I = s.input, K = last - first;
  const std::vector<Activation>& act = s.activations[d];
  // X W^T for the steps' rows ((step - first) * B + b: each entry's time for that step) at once.
  std::vector<double> xg_local;
  std::vector<double>& xg = trace != nullptr ? trace->x : xg_local;
  xg.assign(static_cast<size_t>(K * B * I), 0.0);
  for (int64_t step = first; step < last; ++step) {
    for (int64_t b = 0; b < B; ++b) {
      if (step < s.lengths[b]) in.x(TimeOf(s, d, step, b), b, xg.data() + ((step - first) * B + b) * I);
    }
  }
  std::vector<double> xw(static_cast<size_t>(K * B * GH), 0.0);
  if (K * B > 0 && I > 0) Gemm(false, true, K * B, GH, I, 1.0, xg.data(), I, in.w.data(), I, 0.0, xw.data(), GH);
  std::vector<double>& h = out.h_last;
  std::vector<double>& c = out.c_last;
  if (trace != nullptr) {
    trace->pre.assign(static_cast<size_t>(K * B * GH), 0.0);
    trace->act.assign(trace->pre.size(), 0.0);
    trace->h_prev.assign(static_cast<size_t>(K * B * H), 0.0);
    if (s.cell == Cell::kLstm) trace->c.assign(trace->h_prev.size(), 0.0), trace->c_prev = trace->c;
    if (s.linear_before_reset) trace->rh.assign(trace->h_prev.size(), 0.0);
  }
  std::vector<double> pre(static_cast<size_t>(GH)), a(static_cast<size_t>(GH));
  std::vector<double> hr_all(static_cast<size_t>(B * GH));
  std::vector<double> rhp(static_cast<size_t>(H)), hn(static_cast<size_t>(H)), cn(static_cast<size_t>(H));
  for (int64_t step = first; step < last; ++step) {
    // R h of every entry and gate in one product (GRU's candidate without linear_before_reset
    // reads R_h (r * h) instead, below); entries past their length compute rows nobody reads.
    if (B > 0 && H > 0) Gemm(false, true, B, GH, H, 1.0, h.data(), H, in.r.data(), H, 0.0, hr_all.data(), GH);
    for (int64_t b = 0; b < B; ++b) {
      if (step >= s.lengths[b]) continue;
      const int64_t row = (step - first) * B + b;  // the steps' rows: xw and the trace
      const double* hp = h.data() + b * H;
      const double* xr = xw.data() + row * GH;
      const double* hr = hr_all.data() + b * GH;
      if (s.cell == Cell::kLstm) {
        const double* cp = c.data() + b * H;
        for (int64_t k = 0; k < H; ++k) {
          auto lin = [&](int64_t gate) { return xr[gate * H + k] + in.wb[gate * H + k] + in.rb[gate * H + k] + hr[gate * H + k]; };
          const double ai = lin(0) + in.p[k] * cp[k];
          const double af = lin(2) + in.p[2 * H + k] * cp[k];
          const double ac = lin(3);
          const double gi = act[0].Apply(Clipped(s, ai));
          const double gf = s.input_forget ? 1.0 - gi : act[0].Apply(Clipped(s, af));
          const double gc = act[1].Apply(Clipped(s, ac));
          cn[k] = gf * cp[k] + gi * gc;
          const double ao = lin(1) + in.p[H + k] * cn[k];
          const double go = act[0].Apply(Clipped(s, ao));
          hn[k] = go * act[2].Apply(cn[k]);
          pre[k] = ai, pre[H + k] = ao, pre[2 * H + k] = af, pre[3 * H + k] = ac;
          a[k] = gi, a[H + k] = go, a[2 * H + k] = gf, a[3 * H + k] = gc;
        }
      } else if (s.cell == Cell::kGru) {
        for (int64_t k = 0; k < H; ++k) {
          pre[k] = xr[k] + in.wb[k] + in.rb[k] + hr[k];
          pre[H + k] = xr[H + k] + in.wb[H + k] + in.rb[H + k] + hr[H + k];
          a[k] = act[0].Apply(Clipped(s, pre[k]));
          a[H + k] = act[0].Apply(Clipped(s, pre[H + k]));
          rhp[k] = a[H + k] * hp[k];
        }
        for (int64_t k = 0; k < H; ++k) {
          double rec;
          if (s.linear_before_reset) {
            const double u = hr[2 * H + k] + in.rb[2 * H + k];
            if (trace != nullptr) trace->rh[row * H + k] = u;
            rec = a[H + k] * u;
          } else {
            double sum = 0.0;
            const double* rr = in.r.data() + (2 * H + k) * H;
            for (int64_t m = 0; m < H; ++m) sum += rr[m] * rhp[m];
            rec = sum + in.rb[2 * H + k];
          }
          pre[2 * H + k] = xr[2 * H + k] + in.wb[2 * H + k] + rec;
          a[2 * H + k] = act[1].Apply(Clipped(s, pre[2 * H + k]));
          hn[k] = (1.0 - a[k]) * a[2 * H + k] + a[k] * hp[k];
        }
      } else {
        for (int64_t k = 0; k < H; ++k) {
          pre[k] = xr[k] + in.wb[k] + in.rb[k] + hr[k];
          a[k] = act[0].Apply(Clipped(s, pre[k]));
          hn[k] = a[k];
        }
      }
      if (trace != nullptr) {
        std::copy(pre.begin(), pre.end(), trace->pre.begin() + row * GH);
        std::copy(a.begin(), a.end(), trace->act.begin() + row * GH);
        std::copy(hp, hp + H, trace->h_prev.begin() + row * H);
        if (s.cell == Cell::kLstm) {
          std::copy(c.begin() + b * H, c.begin() + (b + 1) * H, trace->c_prev.begin() + row * H);
          std::copy(cn.begin(), cn.end(), trace->c.begin() + row * H);
        }
      }
      for (int64_t k = 0; k < H; ++k) h[b * H + k] = round(hn[k]);
      if (out.y) out.y(TimeOf(s, d, step, b), b, h.data() + b * H);
      if (s.cell == Cell::kLstm) std::copy(cn.begin(), cn.end(), c.begin() + b * H);
    }
  }
}

void RunDirection(const RecurrentSetup& s, const DirectionInputs& in, int64_t d, RoundFn round, DirectionOutputs& out) {
  out.h_last = in.h0;
  out.c_last = s.cell == Cell::kLstm ? in.c0 : std::vector<double>();
  const int64_t k = SegmentSteps(s);
  for (int64_t first = 0; first < s.seq; first += k) RunSteps(s, in, d, round, first, std::min(s.seq, first + k), out, nullptr);
}

void BackwardDirection(const RecurrentSetup& s, const DirectionInputs& in, int64_t d, RoundFn round,
                       int64_t segment_steps, const ReadRow& dy, const std::vector<double>& dy_h,
                       const std::vector<double>& dy_c, const WriteRow& dx, DirectionGrads& out) {
  const int64_t H = s.hidden, GH = s.gates * H, B = s.batch, T = s.seq, I = s.input;
  const int64_t K = std::clamp<int64_t>(segment_steps, 1, std::max<int64_t>(T, 1));
  const bool lstm = s.cell == Cell::kLstm, gru = s.cell == Cell::kGru;
  const std::vector<Activation>& act = s.activations[d];
  // The carried state at the start of each segment of K steps: a forward pass without a trace
  // (none with one segment, whose state is the initial one).
  const int64_t segments = (T + K - 1) / K;
  std::vector<DirectionOutputs> starts(static_cast<size_t>(std::max<int64_t>(segments, 1)));
  starts[0].h_last = in.h0;
  if (lstm) starts[0].c_last = in.c0;
  for (int64_t seg = 1; seg < segments; ++seg) {
    starts[seg] = starts[seg - 1];
    RunSteps(s, in, d, round, (seg - 1) * K, seg * K, starts[seg], nullptr);
  }
  // Gradients of the gates' pre-activations per step and entry of a segment: `da` for the X W^T +
  // Wb part, `dar` for the R part (they differ only in GRU's candidate: linear_before_reset
  // multiplies the R part by r, otherwise R_h reads r * h).
  std::vector<double> da, dar, dx_rows;
  std::vector<double> carry_h = dy_h.empty() ? std::vector<double>(static_cast<size_t>(B * H), 0.0) : dy_h;
  std::vector<double> carry_c;
  if (lstm) carry_c = dy_c.empty() ? std::vector<double>(static_cast<size_t>(B * H), 0.0) : dy_c;
  out.r.assign(static_cast<size_t>(GH * H), 0.0);
  out.p.assign(lstm ? static_cast<size_t>(3 * H) : 0, 0.0);
  out.w.assign(static_cast<size_t>(GH * I), 0.0);
  out.wb.assign(static_cast<size_t>(GH), 0.0);
  out.rb.assign(static_cast<size_t>(GH), 0.0);
  std::vector<double> dh(static_cast<size_t>(H)), dy_row(static_cast<size_t>(H), 0.0);
  // Per step: each entry's gradient through R (`through_r`, 0 for entries past their length and
  // for GRU's candidate without linear_before_reset, which reaches h_prev through r * h_prev), and
  // the gradient of each entry's previous hidden state.
  std::vector<double> through_r(static_cast<size_t>(B * GH)), dhp_all(static_cast<size_t>(B * H));
  const bool reset_reads_rh = gru && !s.linear_before_reset;
  DirectionTrace trace;
  for (int64_t seg = segments - 1; seg >= 0; --seg) {
    const int64_t first = seg * K, last = std::min(T, first + K), rows = (last - first) * B;
    DirectionOutputs state = starts[seg];
    RunSteps(s, in, d, round, first, last, state, &trace);  // the segment's trace, again
    da.assign(static_cast<size_t>(rows * GH), 0.0);
    dar.assign(da.size(), 0.0);
    for (int64_t step = last - 1; step >= first; --step) {
      std::fill(through_r.begin(), through_r.end(), 0.0);
      std::fill(dhp_all.begin(), dhp_all.end(), 0.0);
      for (int64_t b = 0; b < B; ++b) {
        if (step >= s.lengths[b]) continue;
        const int64_t row = (step - first) * B + b;          // the segment's rows
        const double* pre = trace.pre.data() + row * GH;
        const double* a = trace.act.data() + row * GH;
        const double* hp = trace.h_prev.data() + row * H;
        double* g = da.data() + row * GH;
        double* gr = dar.data() + row * GH;
        double* dhp = dhp_all.data() + b * H;
        if (dy) dy(TimeOf(s, d, step, b), b, dy_row.data());
        for (int64_t k = 0; k < H; ++k) dh[k] = carry_h[b * H + k] + dy_row[k];
        if (lstm) {
          const double* cp = trace.c_prev.data() + row * H;
          const double* cn = trace.c.data() + row * H;
          for (int64_t k = 0; k < H; ++k) {
            const double gi = a[k], go = a[H + k], gf = a[2 * H + k], gc = a[3 * H + k];
            const double th = act[2].Apply(cn[k]);
            const double dao = dh[k] * th * GateDerivative(s, act[0], pre[H + k], go);
            const double dc = carry_c[b * H + k] + dh[k] * go * act[2].Derivative(cn[k], th) + dao * in.p[H + k];
            double di = dc * gc;
            const double df = dc * cp[k];
            if (s.input_forget) di -= df;
            const double dai = di * GateDerivative(s, act[0], pre[k], gi);
            const double daf = s.input_forget ? 0.0 : df * GateDerivative(s, act[0], pre[2 * H + k], gf);
            const double dac = dc * gi * GateDerivative(s, act[1], pre[3 * H + k], gc);
            carry_c[b * H + k] = dc * gf + dai * in.p[k] + daf * in.p[2 * H + k];
            out.p[k] += dai * cp[k];
            out.p[H + k] += dao * cn[k];
            out.p[2 * H + k] += daf * cp[k];
            g[k] = dai, g[H + k] = dao, g[2 * H + k] = daf, g[3 * H + k] = dac;
          }
          std::copy(g, g + GH, gr);
        } else if (gru) {
          for (int64_t k = 0; k < H; ++k) {
            const double z = a[k], hc = a[2 * H + k];
            g[k] = dh[k] * (hp[k] - hc) * GateDerivative(s, act[0], pre[k], z);
            g[2 * H + k] = dh[k] * (1.0 - z) * GateDerivative(s, act[1], pre[2 * H + k], hc);
            dhp[k] = dh[k] * z;
          }
          for (int64_t k = 0; k < H; ++k) {
            const double r = a[H + k];
            double dr;
            if (s.linear_before_reset) {
              dr = g[2 * H + k] * trace.rh[row * H + k];
              gr[2 * H + k] = g[2 * H + k] * r;
            } else {
              double sum = 0.0;  // d(r * h_prev)[k] = sum_j dah[j] R_h[j][k]
              for (int64_t j = 0; j < H; ++j) sum += g[2 * H + j] * in.r[(2 * H + j) * H + k];
              dr = sum * hp[k];
              dhp[k] += sum * r;
              gr[2 * H + k] = g[2 * H + k];
            }
            g[H + k] = dr * GateDerivative(s, act[0], pre[H + k], r);
            gr[k] = g[k];
            gr[H + k] = g[H + k];
          }
        } else {
          for (int64_t k = 0; k < H; ++k) g[k] = dh[k] * GateDerivative(s, act[0], pre[k], a[k]);
          std::copy(g, g + GH, gr);
        }
        std::copy(gr, gr + (reset_reads_rh ? 2 * H : GH), through_r.begin() + b * GH);
      }
      // Through R to the previous hidden states: dh_prev += through_r R, all entries at once.
      if (B > 0 && H > 0) Gemm(false, false, B, H, GH, 1.0, through_r.data(), GH, in.r.data(), H, 1.0, dhp_all.data(), H);
      for (int64_t b = 0; b < B; ++b) {
        if (step < s.lengths[b]) std::copy(dhp_all.begin() + b * H, dhp_all.begin() + (b + 1) * H, carry_h.begin() + b * H);
      }
    }
    // The segment's share of R's gradient: dR += dar^T h_prev; GRU's candidate without
    // linear_before_reset read r * h_prev. Rows of entries past their length are 0 in dar and da.
    if (rows > 0 && H > 0) {
      // Without linear_before_reset GRU's candidate rows of R read r * h_prev, not h_prev.
      Gemm(true, false, reset_reads_rh ? 2 * H : GH, H, rows, 1.0, dar.data(), GH, trace.h_prev.data(), H, 1.0,
           out.r.data(), H);
      if (reset_reads_rh) {
        std::vector<double> rh_prev(trace.h_prev.size());
        for (int64_t row = 0; row < rows; ++row) {
          for (int64_t k = 0; k < H; ++k) rh_prev[row * H + k] = trace.act[row * GH + H + k] * trace.h_prev[row * H + k];
        }
        Gemm(true, false, H, H, rows, 1.0, dar.data() + 2 * H, GH, rh_prev.data(), H, 1.0, out.r.data() + 2 * H * H, H);
      }
    }
    // The input side: dW += da^T X (the segment's gathered X rows), dX's rows = da W, the biases'
    // column sums.
    if (rows > 0 && I > 0) {
      Gemm(true, false, GH, I, rows, 1.0, da.data(), GH, trace.x.data(), I, 1.0, out.w.data(), I);
    }
    if (rows > 0 && I > 0 && dx) {
      dx_rows.assign(static_cast<size_t>(rows * I), 0.0);
      Gemm(false, false, rows, I, GH, 1.0, da.data(), GH, in.w.data(), I, 0.0, dx_rows.data(), I);
      for (int64_t step = first; step < last; ++step) {
        for (int64_t b = 0; b < B; ++b) {
          if (step < s.lengths[b]) dx(TimeOf(s, d, step, b), b, dx_rows.data() + ((step - first) * B + b) * I);
        }
      }
    }
    for (int64_t row = 0; row < rows; ++row) {
      for (int64_t j = 0; j < GH; ++j) {
        out.wb[j] += da[row * GH + j];
        out.rb[j] += dar[row * GH + j];
      }
    }
  }
  out.h0 = std::move(carry_h);
  out.c0 = std::move(carry_c);
}

}  // namespace memopt::recurrent
