// The recurrent engine (declared in recurrent_util.h): one direction's steps forward, with or without the
// trace the backward reads, and the backward a segment of steps at a time.
//
// Each step works on a group of batch entries at once (ForEntryGroups: one group per thread when
// R has its panels): one product of the carried states with R (R^T laid out once per direction,
// PreparePanels), the gates' pre-activations as arrays, the activations in vector form, then each
// entry still inside its length commits its state, its Y row and its trace rows. Entries past
// their length compute rows that nobody reads.
#include <algorithm>
#include <cmath>
#include <functional>
#include <type_traits>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/small_gemm.h"
#include "ops/recurrent/recurrent_util.h"

namespace memopt::recurrent {
namespace {

/// Bytes a segment of steps holds at most in the backward's trace and gradients (SegmentSteps).
constexpr int64_t kSegmentBytes = int64_t{2} << 20;
/// Batch sizes up to this read R's panel in the step products; larger ones amortise a BLAS
/// call's packing of R over enough rows.
constexpr int64_t kPanelMaxRows = 64;
/// Columns of a step product per thread item (a multiple of the panel's vector width).
constexpr int64_t kPanelColumns = 64;

template <typename C>
C Clipped(const RecurrentSetup& s, C a) {
  return s.clip > 0.0 ? std::clamp(a, static_cast<C>(-s.clip), static_cast<C>(s.clip)) : a;
}

/// d act(clip(a)) / d a.
template <typename C>
C GateDerivative(const RecurrentSetup& s, const Activation& act, C a, C y) {
  if (s.clip > 0.0 && std::abs(a) > static_cast<C>(s.clip)) return C(0);
  return static_cast<C>(act.Derivative(static_cast<double>(a), static_cast<double>(y)));
}

/// y[i] = act(clip(a[i])) for n values; `tmp` holds n values when s.clip is set.
template <typename C>
void Activate(const RecurrentSetup& s, const Activation& act, const C* a, C* y, int64_t n, C* tmp) {
  if (s.clip > 0.0) {
    for (int64_t i = 0; i < n; ++i) tmp[i] = Clipped(s, a[i]);
    act.ApplyArray(tmp, y, n);
  } else {
    act.ApplyArray(a, y, n);
  }
}

/// y[m][n] = a[m][k] M, where M (k x n) is `panel` (rows of ldp, PreparePanels) when there is one
/// and m is small, else op(mat) through BLAS (mat_trans: mat is [n][ldm] holding M^T).
template <typename C>
void StepProduct(int64_t m, int64_t n, int64_t k, const C* a, int64_t lda, const C* panel, int64_t ldp,
                 bool mat_trans, const C* mat, int64_t ldm, C* y, int64_t ldy) {
  if (m <= 0 || n <= 0) return;
  if constexpr (std::is_same_v<C, float>) {
    if (panel != nullptr && m <= kPanelMaxRows) {
      const int64_t blocks = (n + kPanelColumns - 1) / kPanelColumns;
      ParallelFor(blocks, m * k * kPanelColumns, [&](int64_t begin, int64_t end) {
        const int64_t j0 = begin * kPanelColumns, j1 = std::min(n, end * kPanelColumns);
        math::SmallGemmOnPanel(false, m, j1 - j0, k, 1.0f, a, lda, panel + j0, ldp, y + j0, ldy);
      });
      return;
    }
  }
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(y + i * ldy, y + i * ldy + n, C(0));
    return;
  }
  Gemm(false, mat_trans, m, n, k, C(1), a, lda, mat, ldm, C(0), y, ldy);
}

/// Rows of `rows` x `cols` into a zero-padded panel of `ld` = cols rounded up to the vector
/// width, plus one vector of slack (SmallGemmOnPanel reads whole vectors): element (i, j) from
/// at(i, j).
template <typename F>
std::vector<float> Panel(int64_t rows, int64_t cols, int64_t& ld, F&& at) {
  ld = (cols + math::kSmallGemmPad - 1) / math::kSmallGemmPad * math::kSmallGemmPad;
  std::vector<float> panel(static_cast<size_t>(rows * ld + math::kSmallGemmPad), 0.0f);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) panel[i * ld + j] = at(i, j);
  return panel;
}

/// Runs fn(b0, b1) over the batch entries [0, B): with R's panels (`panels`), whose products give
/// the same bits for any rows, one contiguous group per thread (a group per entry would read the
/// panel once per entry and step); otherwise all entries in one call, whose BLAS products sum in
/// an order that depends on their rows. `cost_per_entry` is ParallelFor's cost of one entry.
void ForEntryGroups(int64_t B, int64_t cost_per_entry, bool panels, const std::function<void(int64_t, int64_t)>& fn) {
  if (!panels) {
    fn(0, B);
    return;
  }
  const int64_t groups = std::clamp<int64_t>(NumThreads(), 1, std::max<int64_t>(B, 1));
  ParallelFor(groups, (B / groups + 1) * cost_per_entry,
              [&](int64_t g0, int64_t g1) { fn(B * g0 / groups, B * g1 / groups); });
}

/// Zeroes trace row `row` (an entry past its length): the backward's products read every row.
template <typename C>
void ZeroTraceRow(const RecurrentSetup& s, int64_t row, DirectionTrace<C>& trace) {
  const int64_t H = s.hidden, GH = s.gates * H;
  std::fill(trace.pre.begin() + row * GH, trace.pre.begin() + (row + 1) * GH, C(0));
  std::fill(trace.act.begin() + row * GH, trace.act.begin() + (row + 1) * GH, C(0));
  for (std::vector<C>* v : {&trace.h_prev, &trace.c, &trace.c_prev, &trace.rh}) {
    if (!v->empty()) std::fill(v->begin() + row * H, v->begin() + (row + 1) * H, C(0));
  }
}

}  // namespace

template <typename C>
void PreparePanels(const RecurrentSetup& s, DirectionInputs<C>& in) {
  if constexpr (std::is_same_v<C, float>) {
    if (!math::SmallGemmPanelApplies() || s.batch > kPanelMaxRows) return;
    const int64_t H = s.hidden, GH = s.gates * H;
    const float* r = in.r.data();
    in.rt_panel = Panel(H, GH, in.rt_ld, [r, H](int64_t k, int64_t j) { return r[j * H + k]; });  // R^T
    in.r_panel = Panel(GH, H, in.r_ld, [r, H](int64_t j, int64_t k) { return r[j * H + k]; });    // R
  } else {
    (void)s, (void)in;
  }
}

int64_t TimeOf(const RecurrentSetup& s, int64_t d, int64_t step, int64_t b) {
  return Reverse(s, d) ? s.lengths[b] - 1 - step : step;
}

int64_t SegmentSteps(const RecurrentSetup& s, int64_t value_bytes) {
  const int64_t per_step = s.batch * value_bytes * (5 * s.gates * s.hidden + 5 * s.hidden + s.input);
  return std::clamp<int64_t>(kSegmentBytes / std::max<int64_t>(per_step, 1), 1, std::max<int64_t>(s.seq, 1));
}

template <typename C>
void RunSteps(const RecurrentSetup& s, const DirectionInputs<C>& in, int64_t d, RoundFn<C> round, int64_t first,
              int64_t last, DirectionOutputs<C>& out, DirectionTrace<C>* trace, StepWorkspace<C>* workspace) {
  const int64_t H = s.hidden, GH = s.gates * H, B = s.batch, I = s.input, K = last - first;
  const std::vector<Activation>& act = s.activations[d];
  const bool lstm = s.cell == Cell::kLstm, gru = s.cell == Cell::kGru;
  const C* rt = in.rt_panel.empty() ? nullptr : in.rt_panel.data();
  StepWorkspace<C> local;
  StepWorkspace<C>& w = workspace != nullptr ? *workspace : local;
  // Vectors are resized, not cleared: every element is written before it is read (rows of
  // entries past their length are zeroed where the backward's products read them).
  const auto size = [](std::vector<C>& v, int64_t n) { v.resize(static_cast<size_t>(n)); };
  // X W^T for the steps' rows ((step - first) * B + b: each entry's time for that step) at once.
  std::vector<C>& xg = trace != nullptr ? trace->x : w.xg;
  size(xg, K * B * I);
  for (int64_t step = first; step < last; ++step) {
    for (int64_t b = 0; b < B; ++b) {
      C* row = xg.data() + ((step - first) * B + b) * I;
      if (step < s.lengths[b]) {
        in.x(TimeOf(s, d, step, b), b, row);
      } else {
        std::fill(row, row + I, C(0));
      }
    }
  }
  std::vector<C>& xw = w.xw;
  size(xw, K * B * GH);
  if (K * B > 0 && I > 0) {
    Gemm(false, true, K * B, GH, I, C(1), xg.data(), I, in.w.data(), I, C(0), xw.data(), GH);
  } else {
    std::fill(xw.begin(), xw.end(), C(0));
  }
  // The biases added to X W^T: Wb, and Rb but for GRU's candidate (whose Rb goes with R h).
  std::vector<C>& bias = w.bias;
  size(bias, GH);
  for (int64_t j = 0; j < GH; ++j) bias[j] = in.wb[j] + (gru && j >= 2 * H ? C(0) : in.rb[j]);
  std::vector<C>& h = out.h_last;
  std::vector<C>& c = out.c_last;
  if (trace != nullptr) {
    size(trace->pre, K * B * GH);
    size(trace->act, K * B * GH);
    size(trace->h_prev, K * B * H);
    if (lstm) size(trace->c, K * B * H), size(trace->c_prev, K * B * H);
    if (s.linear_before_reset) size(trace->rh, K * B * H);
  }
  // One step's arrays over all entries: pre-activations and values [B][GH], R h [B][GH], the new
  // states [B][H], and GRU's r * h_prev and R_h (r * h_prev) [B][H].
  for (std::vector<C>* v : {&w.pre, &w.a, &w.hr, &w.tmp}) size(*v, B * GH);
  for (std::vector<C>* v : {&w.hn, &w.cn, &w.th, &w.rhp, &w.rrh}) size(*v, B * H);
  std::vector<C>&pre = w.pre, &a = w.a, &hr = w.hr, &tmp = w.tmp;
  std::vector<C>&hn = w.hn, &cn = w.cn, &th = w.th, &rhp = w.rhp, &rrh = w.rrh;
  // Entries are independent through time: with R's panel, whose products give the same bits for
  // any group of rows, groups of entries run all the segment's steps on the threads without
  // meeting at each step. BLAS products (double, large batches) sum in an order that depends on
  // their rows, so those run all entries together, each product split over the threads.
  const auto steps = [&](int64_t b0, int64_t b1) {
    for (int64_t step = first; step < last; ++step) {
      // R h of every entry and gate in one product (GRU's candidate without linear_before_reset
      // reads R_h (r * h) instead, below).
      StepProduct<C>(b1 - b0, GH, H, h.data() + b0 * H, H, rt, in.rt_ld, true, in.r.data(), H, hr.data() + b0 * GH, GH);
      const C* xs = xw.data() + (step - first) * B * GH;
      for (int64_t b = b0; b < b1; ++b) {
        const C* xb = xs + b * GH;
        const C* hb = hr.data() + b * GH;
        C* pb = pre.data() + b * GH;
        for (int64_t j = 0; j < GH; ++j) pb[j] = xb[j] + bias[j] + hb[j];
      }
      if (lstm) {
        for (int64_t b = b0; b < b1; ++b) {
          C* pb = pre.data() + b * GH;
          C* ab = a.data() + b * GH;
          const C* cp = c.data() + b * H;
          C* cb = cn.data() + b * H;
          for (int64_t k = 0; k < H; ++k) pb[k] += in.p[k] * cp[k], pb[2 * H + k] += in.p[2 * H + k] * cp[k];
          Activate(s, act[0], pb, ab, H, tmp.data() + b * GH);                    // i
          if (s.input_forget) {
            for (int64_t k = 0; k < H; ++k) ab[2 * H + k] = C(1) - ab[k];  // f = 1 - i
          } else {
            Activate(s, act[0], pb + 2 * H, ab + 2 * H, H, tmp.data() + b * GH);  // f
          }
          Activate(s, act[1], pb + 3 * H, ab + 3 * H, H, tmp.data() + b * GH);    // c~
          for (int64_t k = 0; k < H; ++k) {
            cb[k] = ab[2 * H + k] * cp[k] + ab[k] * ab[3 * H + k];
            pb[H + k] += in.p[H + k] * cb[k];
          }
          Activate(s, act[0], pb + H, ab + H, H, tmp.data() + b * GH);            // o
          act[2].ApplyArray(cb, th.data() + b * H, H);
          for (int64_t k = 0; k < H; ++k) hn[b * H + k] = ab[H + k] * th[b * H + k];
        }
      } else if (gru) {
        for (int64_t b = b0; b < b1; ++b) {
          Activate(s, act[0], pre.data() + b * GH, a.data() + b * GH, 2 * H, tmp.data() + b * GH);  // z, r
          for (int64_t k = 0; k < H; ++k) rhp[b * H + k] = a[b * GH + H + k] * h[b * H + k];
        }
        // Without linear_before_reset the candidate reads R_h (r * h_prev) + Rb_h: one product.
        if (!s.linear_before_reset) {
          StepProduct<C>(b1 - b0, H, H, rhp.data() + b0 * H, H, rt == nullptr ? nullptr : rt + 2 * H, in.rt_ld, true,
                         in.r.data() + 2 * H * H, H, rrh.data() + b0 * H, H);
        }
        for (int64_t b = b0; b < b1; ++b) {
          C* pb = pre.data() + b * GH;
          const C* ab = a.data() + b * GH;
          const C* hb = hr.data() + b * GH;
          const C* xb = xs + b * GH;
          for (int64_t k = 0; k < H; ++k) {
            const C xpart = xb[2 * H + k] + bias[2 * H + k];  // X W_h^T + Wb_h
            if (s.linear_before_reset) {
              const C u = hb[2 * H + k] + in.rb[2 * H + k];
              if (trace != nullptr && step < s.lengths[b]) trace->rh[((step - first) * B + b) * H + k] = u;
              pb[2 * H + k] = xpart + ab[H + k] * u;
            } else {
              pb[2 * H + k] = xpart + (rrh[b * H + k] + in.rb[2 * H + k]);
            }
          }
          Activate(s, act[1], pb + 2 * H, a.data() + b * GH + 2 * H, H, tmp.data() + b * GH);
          for (int64_t k = 0; k < H; ++k) {
            const C z = ab[k];
            hn[b * H + k] = (C(1) - z) * ab[2 * H + k] + z * h[b * H + k];
          }
        }
      } else {
        for (int64_t b = b0; b < b1; ++b) {
          Activate(s, act[0], pre.data() + b * GH, a.data() + b * GH, H, tmp.data() + b * GH);
          std::copy(a.begin() + b * GH, a.begin() + (b + 1) * GH, hn.begin() + b * H);
        }
      }
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t row = (step - first) * B + b;  // the steps' rows: xw and the trace
        if (step >= s.lengths[b]) {
          if (trace != nullptr) ZeroTraceRow(s, row, *trace);
          continue;
        }
        if (trace != nullptr) {
          std::copy(pre.begin() + b * GH, pre.begin() + (b + 1) * GH, trace->pre.begin() + row * GH);
          std::copy(a.begin() + b * GH, a.begin() + (b + 1) * GH, trace->act.begin() + row * GH);
          std::copy(h.begin() + b * H, h.begin() + (b + 1) * H, trace->h_prev.begin() + row * H);
          if (lstm) {
            std::copy(c.begin() + b * H, c.begin() + (b + 1) * H, trace->c_prev.begin() + row * H);
            std::copy(cn.begin() + b * H, cn.begin() + (b + 1) * H, trace->c.begin() + row * H);
          }
        }
        for (int64_t k = 0; k < H; ++k) h[b * H + k] = round(hn[b * H + k]);
        if (out.y) out.y(TimeOf(s, d, step, b), b, h.data() + b * H);
        if (lstm) std::copy(cn.begin() + b * H, cn.begin() + (b + 1) * H, c.begin() + b * H);
      }
    }
  };
  ForEntryGroups(B, K * GH * (H + 8), rt != nullptr, steps);
}

template <typename C>
void RunDirection(const RecurrentSetup& s, const DirectionInputs<C>& in, int64_t d, RoundFn<C> round,
                  DirectionOutputs<C>& out) {
  out.h_last = in.h0;
  out.c_last = s.cell == Cell::kLstm ? in.c0 : std::vector<C>();
  const int64_t k = SegmentSteps(s, sizeof(C));
  StepWorkspace<C> workspace;
  for (int64_t first = 0; first < s.seq; first += k) {
    RunSteps<C>(s, in, d, round, first, std::min(s.seq, first + k), out, nullptr, &workspace);
  }
}

template <typename C>
void BackwardDirection(const RecurrentSetup& s, const DirectionInputs<C>& in, int64_t d, RoundFn<C> round,
                       int64_t segment_steps, const ReadRow<C>& dy, const std::vector<C>& dy_h,
                       const std::vector<C>& dy_c, const WriteRow<C>& dx, DirectionGrads<C>& out) {
  const int64_t H = s.hidden, GH = s.gates * H, B = s.batch, T = s.seq, I = s.input;
  const int64_t K = std::clamp<int64_t>(segment_steps, 1, std::max<int64_t>(T, 1));
  const bool lstm = s.cell == Cell::kLstm, gru = s.cell == Cell::kGru;
  const std::vector<Activation>& act = s.activations[d];
  const C* rp = in.r_panel.empty() ? nullptr : in.r_panel.data();
  // The carried state at the start of each segment of K steps: a forward pass without a trace
  // (none with one segment, whose state is the initial one).
  const int64_t segments = (T + K - 1) / K;
  StepWorkspace<C> workspace;
  std::vector<DirectionOutputs<C>> starts(static_cast<size_t>(std::max<int64_t>(segments, 1)));
  starts[0].h_last = in.h0;
  if (lstm) starts[0].c_last = in.c0;
  for (int64_t seg = 1; seg < segments; ++seg) {
    starts[seg].h_last = starts[seg - 1].h_last;
    starts[seg].c_last = starts[seg - 1].c_last;
    RunSteps<C>(s, in, d, round, (seg - 1) * K, seg * K, starts[seg], nullptr, &workspace);
  }
  // Gradients of the gates' pre-activations per step and entry of a segment: `da` for the X W^T +
  // Wb part, `dar` for the R part (they differ only in GRU's candidate: linear_before_reset
  // multiplies the R part by r, otherwise R_h reads r * h).
  std::vector<C> da, dar, dx_rows;
  std::vector<C> carry_h = dy_h.empty() ? std::vector<C>(static_cast<size_t>(B * H), C(0)) : dy_h;
  std::vector<C> carry_c;
  if (lstm) carry_c = dy_c.empty() ? std::vector<C>(static_cast<size_t>(B * H), C(0)) : dy_c;
  out.r.assign(static_cast<size_t>(GH * H), C(0));
  out.p.assign(lstm ? static_cast<size_t>(3 * H) : 0, C(0));
  out.w.assign(static_cast<size_t>(GH * I), C(0));
  out.wb.assign(static_cast<size_t>(GH), C(0));
  out.rb.assign(static_cast<size_t>(GH), C(0));
  // Per step: each entry's gradient through R (`through_r`, 0 for entries past their length and
  // for GRU's candidate without linear_before_reset, which reaches h_prev through r * h_prev), the
  // gradient of each entry's previous hidden state, and (GRU) d(r * h_prev) = dah R_h.
  std::vector<C> through_r(static_cast<size_t>(B * GH)), dhp_all(static_cast<size_t>(B * H));
  std::vector<C> dhp_r(dhp_all.size()), drh(dhp_all.size());
  const bool reset_reads_rh = gru && !s.linear_before_reset;
  DirectionTrace<C> trace;
  for (int64_t seg = segments - 1; seg >= 0; --seg) {
    const int64_t first = seg * K, last = std::min(T, first + K), rows = (last - first) * B;
    DirectionOutputs<C> state;
    state.h_last = starts[seg].h_last;
    state.c_last = starts[seg].c_last;
    RunSteps<C>(s, in, d, round, first, last, state, &trace, &workspace);  // the segment's trace, again
    da.assign(static_cast<size_t>(rows * GH), C(0));
    dar.assign(da.size(), C(0));
    // Entries run back through the segment independently, in groups on the threads when R has
    // its panels (as in RunSteps); each has its own dH and dY rows.
    const auto steps = [&](int64_t b0, int64_t b1) {
      std::vector<C> dh(static_cast<size_t>(H)), dy_row(static_cast<size_t>(H), C(0)), th(static_cast<size_t>(H));
      for (int64_t step = last - 1; step >= first; --step) {
        std::fill(through_r.begin() + b0 * GH, through_r.begin() + b1 * GH, C(0));
        std::fill(dhp_all.begin() + b0 * H, dhp_all.begin() + b1 * H, C(0));
        for (int64_t b = b0; b < b1; ++b) {
          if (step >= s.lengths[b]) continue;
          const int64_t row = (step - first) * B + b;  // the segment's rows
          const C* pre = trace.pre.data() + row * GH;
          const C* a = trace.act.data() + row * GH;
          const C* hp = trace.h_prev.data() + row * H;
          C* g = da.data() + row * GH;
          C* dhp = dhp_all.data() + b * H;
          if (dy) dy(TimeOf(s, d, step, b), b, dy_row.data());
          for (int64_t k = 0; k < H; ++k) dh[k] = carry_h[b * H + k] + dy_row[k];
          if (lstm) {
            const C* cp = trace.c_prev.data() + row * H;
            const C* cn = trace.c.data() + row * H;
            act[2].ApplyArray(cn, th.data(), H);
            for (int64_t k = 0; k < H; ++k) {
              const C gi = a[k], go = a[H + k], gf = a[2 * H + k], gc = a[3 * H + k];
              const C dao = dh[k] * th[k] * GateDerivative(s, act[0], pre[H + k], go);
              const C dc = carry_c[b * H + k] + dh[k] * go * static_cast<C>(act[2].Derivative(cn[k], th[k])) +
                           dao * in.p[H + k];
              C di = dc * gc;
              const C df = dc * cp[k];
              if (s.input_forget) di -= df;
              const C dai = di * GateDerivative(s, act[0], pre[k], gi);
              const C daf = s.input_forget ? C(0) : df * GateDerivative(s, act[0], pre[2 * H + k], gf);
              const C dac = dc * gi * GateDerivative(s, act[1], pre[3 * H + k], gc);
              carry_c[b * H + k] = dc * gf + dai * in.p[k] + daf * in.p[2 * H + k];
              g[k] = dai, g[H + k] = dao, g[2 * H + k] = daf, g[3 * H + k] = dac;
            }
          } else if (gru) {
            for (int64_t k = 0; k < H; ++k) {
              const C z = a[k], hc = a[2 * H + k];
              g[k] = dh[k] * (hp[k] - hc) * GateDerivative(s, act[0], pre[k], z);
              g[2 * H + k] = dh[k] * (C(1) - z) * GateDerivative(s, act[1], pre[2 * H + k], hc);
              dhp[k] = dh[k] * z;
            }
          } else {
            for (int64_t k = 0; k < H; ++k) g[k] = dh[k] * GateDerivative(s, act[0], pre[k], a[k]);
          }
        }
        C* da_step = da.data() + (step - first) * B * GH;  // the step's rows
        if (reset_reads_rh) {
          // d(r * h_prev)[b][k] = sum_j dah[b][j] R_h[j][k], all entries at once (rows past their
          // length are 0 in da).
          StepProduct<C>(b1 - b0, H, H, da_step + b0 * GH + 2 * H, GH, rp == nullptr ? nullptr : rp + 2 * H * in.r_ld,
                         in.r_ld, false, in.r.data() + 2 * H * H, H, drh.data() + b0 * H, H);
        }
        if (gru) {
          for (int64_t b = b0; b < b1; ++b) {
            if (step >= s.lengths[b]) continue;
            const int64_t row = (step - first) * B + b;
            const C* pre = trace.pre.data() + row * GH;
            const C* a = trace.act.data() + row * GH;
            const C* hp = trace.h_prev.data() + row * H;
            C* g = da.data() + row * GH;
            C* dhp = dhp_all.data() + b * H;
            for (int64_t k = 0; k < H; ++k) {
              const C r = a[H + k];
              C dr;
              if (s.linear_before_reset) {
                dr = g[2 * H + k] * trace.rh[row * H + k];
              } else {
                dr = drh[b * H + k] * hp[k];
                dhp[k] += drh[b * H + k] * r;
              }
              g[H + k] = dr * GateDerivative(s, act[0], pre[H + k], r);
            }
          }
        }
        for (int64_t b = b0; b < b1; ++b) {
          if (step >= s.lengths[b]) continue;
          const int64_t row = (step - first) * B + b;
          const C* g = da.data() + row * GH;
          C* gr = dar.data() + row * GH;
          std::copy(g, g + GH, gr);
          if (gru && s.linear_before_reset) {
            for (int64_t k = 0; k < H; ++k) gr[2 * H + k] = g[2 * H + k] * trace.act[row * GH + H + k];
          }
          std::copy(gr, gr + (reset_reads_rh ? 2 * H : GH), through_r.begin() + b * GH);
        }
        // Through R to the previous hidden states: dh_prev += through_r R, all entries at once.
        StepProduct<C>(b1 - b0, H, GH, through_r.data() + b0 * GH, GH, rp, in.r_ld, false, in.r.data(), H,
                       dhp_r.data() + b0 * H, H);
        for (int64_t i = b0 * H; i < b1 * H; ++i) dhp_all[i] += dhp_r[i];
        for (int64_t b = b0; b < b1; ++b) {
          if (step < s.lengths[b]) std::copy(dhp_all.begin() + b * H, dhp_all.begin() + (b + 1) * H, carry_h.begin() + b * H);
        }
      }
    };
    ForEntryGroups(B, (last - first) * GH * (H + 8), rp != nullptr, steps);
    // LSTM's peephole gradients from the segment's rows (0 for entries past their length).
    if (lstm) {
      for (int64_t row = 0; row < rows; ++row) {
        const C* g = da.data() + row * GH;
        const C* cp = trace.c_prev.data() + row * H;
        const C* cn = trace.c.data() + row * H;
        for (int64_t k = 0; k < H; ++k) {
          out.p[k] += g[k] * cp[k];
          out.p[H + k] += g[H + k] * cn[k];
          out.p[2 * H + k] += g[2 * H + k] * cp[k];
        }
      }
    }
    // The segment's share of R's gradient: dR += dar^T h_prev; GRU's candidate without
    // linear_before_reset read r * h_prev. Rows of entries past their length are 0 in dar and da.
    if (rows > 0 && H > 0) {
      Gemm(true, false, reset_reads_rh ? 2 * H : GH, H, rows, C(1), dar.data(), GH, trace.h_prev.data(), H, C(1),
           out.r.data(), H);
      if (reset_reads_rh) {
        std::vector<C> rh_prev(trace.h_prev.size());
        for (int64_t row = 0; row < rows; ++row) {
          for (int64_t k = 0; k < H; ++k) rh_prev[row * H + k] = trace.act[row * GH + H + k] * trace.h_prev[row * H + k];
        }
        Gemm(true, false, H, H, rows, C(1), dar.data() + 2 * H, GH, rh_prev.data(), H, C(1), out.r.data() + 2 * H * H, H);
      }
    }
    // The input side: dW += da^T X (the segment's gathered X rows), dX's rows = da W, the biases'
    // column sums.
    if (rows > 0 && I > 0) {
      Gemm(true, false, GH, I, rows, C(1), da.data(), GH, trace.x.data(), I, C(1), out.w.data(), I);
    }
    if (rows > 0 && I > 0 && dx) {
      dx_rows.resize(static_cast<size_t>(rows * I));
      Gemm(false, false, rows, I, GH, C(1), da.data(), GH, in.w.data(), I, C(0), dx_rows.data(), I);
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

#define MEMOPT_RECURRENT_ENGINE(C)                                                                              \
  template void PreparePanels<C>(const RecurrentSetup&, DirectionInputs<C>&);                                  \
  template void RunSteps<C>(const RecurrentSetup&, const DirectionInputs<C>&, int64_t, RoundFn<C>, int64_t,    \
                            int64_t, DirectionOutputs<C>&, DirectionTrace<C>*, StepWorkspace<C>*);             \
  template void RunDirection<C>(const RecurrentSetup&, const DirectionInputs<C>&, int64_t, RoundFn<C>,         \
                                DirectionOutputs<C>&);                                                         \
  template void BackwardDirection<C>(const RecurrentSetup&, const DirectionInputs<C>&, int64_t, RoundFn<C>,    \
                                     int64_t, const ReadRow<C>&, const std::vector<C>&, const std::vector<C>&, \
                                     const WriteRow<C>&, DirectionGrads<C>&);
MEMOPT_RECURRENT_ENGINE(float)
MEMOPT_RECURRENT_ENGINE(double)
#undef MEMOPT_RECURRENT_ENGINE

}  // namespace memopt::recurrent
