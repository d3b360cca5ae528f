// What the recurrent ops (RNN, GRU, LSTM: ONNX opset 7/14) and their gradients share: the decode of
// attributes and inputs, the activation functions with their derivatives, and the engine that runs
// one direction forward (recording what the backward needs) and backward.
//
// Shapes (layout 0; layout 1 swaps seq and batch in X, Y, and dirs and batch in the states):
//   X [seq, batch, input], W [dirs, G*H, input], R [dirs, G*H, H], B [dirs, 2*G*H],
//   sequence_lens [batch], initial_h / initial_c [dirs, batch, H], P [dirs, 3*H];
//   Y [seq, dirs, batch, H], Y_h / Y_c [dirs, batch, H]; G = 1 (RNN), 3 (GRU, zrh), 4 (LSTM, iofc).
// Each direction runs its own weights; a batch entry stops after sequence_lens[b] steps (a reverse
// direction starts at its step sequence_lens[b] - 1): later Y entries are 0 and the states keep
// their last values. `clip` clamps every gate's pre-activation to [-clip, clip].
//
// The engine computes in C: float for float, float16 and bfloat16 tensors (as ONNX Runtime and
// PyTorch do), double for double ones (ComputeIn). The hidden state carried from step to step is
// rounded to the element type (what Y holds), so that the backward, which runs the forward again
// from the op's inputs (memopt's LSTM/GRU/RNN gradients, recurrent_grad_cpu.cc: nothing of the
// forward is kept), recomputes exactly the forward's gates and states: both cut the steps into
// the same segments (SegmentSteps), so even their X W^T products are the same calls. Each step's
// product with R reads R laid out once per direction (PreparePanels: math::SmallGemmOnPanel), not
// a BLAS call that would pack R again every step.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "ir/dtype.h"
#include "util/status.h"

namespace memopt::recurrent {

/// One of ONNX's recurrent activation functions with its alpha/beta.
struct Activation {
  enum class Kind {
    kSigmoid, kTanh, kRelu, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign,
    kSoftplus
  };
  Kind kind = Kind::kSigmoid;
  double alpha = 0.0, beta = 0.0;

  double Apply(double a) const;
  /// d Apply / d a, from the pre-activation `a` and the value `y` = Apply(a).
  double Derivative(double a, double y) const;
  /// y[i] = Apply(a[i]) for n values (y may alias a): float sigmoid and tanh in vector form
  /// (exec/math/vector_math.h), the rest element by element.
  template <typename C>
  void ApplyArray(const C* a, C* y, int64_t n) const;
};

enum class Cell { kRnn, kGru, kLstm };

struct RecurrentSetup {
  Cell cell = Cell::kLstm;
  int64_t gates = 4;  ///< G
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batch_first = false;          ///< layout = 1
  bool reverse_only = false;         ///< direction = "reverse"
  double clip = 0.0;                 ///< 0: no clip
  bool input_forget = false;         ///< LSTM: f = 1 - i
  bool linear_before_reset = false;  ///< GRU
  /// Per direction: f, g, h (LSTM), f, g (GRU), f (RNN).
  std::vector<std::vector<Activation>> activations;
  std::vector<int64_t> lengths;  ///< per batch entry (seq when sequence_lens is absent)
};

/// Decodes the op's attributes and X, W, R, B, sequence_lens, initial_h (, initial_c, P): inputs
/// 0..7 of the forward ops and of the gradient ops alike; errors name what does not match.
Expected<RecurrentSetup> DecodeRecurrent(const KernelContext& ctx, Cell cell);

/// The cell of an op type ("RNN", "GRU", "LSTM").
Cell CellOf(const std::string& op_type);

/// Whether the engine computes a tensor of `dtype` in double (float64) rather than float.
inline bool ComputeInDouble(DataType dtype) { return dtype == DataType::kDouble; }

/// A row of a sequence (X [input], Y, dY [H], dX [input]) at (time, batch entry): the engine reads
/// X and dY and writes Y and dX a row at a time through these, so no whole sequence is held in
/// the compute type beside its tensor (SequenceRows/ToSequenceRows below give them over a tensor).
template <typename C>
using ReadRow = std::function<void(int64_t t, int64_t b, C* row)>;
template <typename C>
using WriteRow = std::function<void(int64_t t, int64_t b, const C* row)>;

/// One direction's tensors in the engine's layout: w [G*H][input], r [G*H][H], wb, rb [G*H], p
/// [3H] (zeros when absent), h0, c0 [batch][H]; X's rows through `x`. For float, PreparePanels
/// adds R^T as rows [H][rt_ld] and R as rows [G*H][r_ld] (zero-padded, for SmallGemmOnPanel);
/// without them (double, or a CPU without AVX2) the step products are BLAS calls on r.
template <typename C>
struct DirectionInputs {
  ReadRow<C> x;
  std::vector<C> w, r, wb, rb, p, h0, c0;
  std::vector<C> rt_panel, r_panel;
  int64_t rt_ld = 0, r_ld = 0;
};

/// Lays out R for the step products (see DirectionInputs); a no-op for double.
template <typename C>
void PreparePanels(const RecurrentSetup& s, DirectionInputs<C>& in);

/// What the backward needs of a segment of one direction's steps, per step and batch entry (row
/// (step - first) * B + b): the gathered X rows [I], the gates' pre-activations and values [G*H]
/// (GRU: the third block is the candidate's; `rh` keeps R_h h + Rb_h for linear_before_reset),
/// the cell states (LSTM) and the states each step read. Rows of entries past their length stay 0.
template <typename C>
struct DirectionTrace {
  std::vector<C> x, pre, act, c, rh, h_prev, c_prev;
};

/// One direction's outputs: Y's rows through `y` (when set: each (t, b) before the entry's length
/// once, the rounded hidden state), and the last hidden and cell states [batch][H]. RunSteps
/// carries h_last and c_last from step to step.
template <typename C>
struct DirectionOutputs {
  WriteRow<C> y;
  std::vector<C> h_last, c_last;
};

/// Rounds a value to the element type the kernel writes (what Y holds): float16 and bfloat16 from
/// float; float from float and double from double are exact (ComputeInDouble picks C).
template <typename C>
using RoundFn = C (*)(C);
template <typename C>
RoundFn<C> RoundingFor(DataType dtype);

/// Steps a segment holds in RunDirection and BackwardDirection: its trace and gradients in values
/// of `value_bytes` within 2 MiB (at least 1 step, at most all).
int64_t SegmentSteps(const RecurrentSetup& s, int64_t value_bytes);

/// Entry b's time at step `step` of direction d (a reverse direction starts at its length - 1).
int64_t TimeOf(const RecurrentSetup& s, int64_t d, int64_t step, int64_t b);

/// Scratch that RunSteps reuses from call to call when given one (a segment's X rows and X W^T,
/// one step's arrays), so that segments do not allocate and fault in fresh pages each time.
template <typename C>
struct StepWorkspace {
  std::vector<C> xg, xw, bias, pre, a, hr, tmp, hn, cn, th, rhp, rrh;
};

/// Runs steps [first, last) of direction d from out.h_last / out.c_last (updated), X W^T for the
/// segment's rows at once. Writes Y's rows when out.y is set, the segment's trace when `trace`
/// is given.
template <typename C>
void RunSteps(const RecurrentSetup& s, const DirectionInputs<C>& in, int64_t d, RoundFn<C> round, int64_t first,
              int64_t last, DirectionOutputs<C>& out, DirectionTrace<C>* trace, StepWorkspace<C>* workspace = nullptr);

/// Runs direction `d` from its initial states, a segment of steps at a time, carrying the hidden
/// state rounded with `round`.
template <typename C>
void RunDirection(const RecurrentSetup& s, const DirectionInputs<C>& in, int64_t d, RoundFn<C> round,
                  DirectionOutputs<C>& out);

/// The gradients of one direction's weights and initial states.
template <typename C>
struct DirectionGrads {
  std::vector<C> w, r, wb, rb, p, h0, c0;
};

/// Backward of direction `d`: dY's rows through `dy`, dy_h / dy_c [batch][H] (each empty when it
/// has no gradient). Hands the direction's share of each dX row (t, b) before the entry's length
/// to `dx`, once. The forward runs again from the initial states, keeping only the carried state
/// at the start of each segment of `segment_steps` steps; then each segment, last first, runs
/// again with its trace and is back-propagated, so the trace is a segment's (SegmentSteps), not
/// the sequence's. One segment runs the forward once.
template <typename C>
void BackwardDirection(const RecurrentSetup& s, const DirectionInputs<C>& in, int64_t d, RoundFn<C> round,
                       int64_t segment_steps, const ReadRow<C>& dy, const std::vector<C>& dy_h,
                       const std::vector<C>& dy_c, const WriteRow<C>& dx, DirectionGrads<C>& out);

/// Reads direction `d`'s weights, biases, peepholes and initial states from the op's inputs
/// (X, W, R, B, sequence_lens, initial_h, initial_c, P: the forward's order, which the gradient
/// ops keep), with R's panels prepared.
template <typename C>
DirectionInputs<C> DirectionOf(const KernelContext& ctx, const RecurrentSetup& s, int64_t d);

/// The shapes of Y and of the states (Y_h, initial_h, ...) in the op's layout.
std::vector<int64_t> YShape(const RecurrentSetup& s);
std::vector<int64_t> StateShape(const RecurrentSetup& s);

/// Element offsets in the op's layout: Y's H values at (t, d, b), a state's at (d, b), X's input
/// values at (t, b).
inline int64_t YOffset(const RecurrentSetup& s, int64_t t, int64_t d, int64_t b) {
  return (s.batch_first ? (b * s.seq + t) * s.dirs + d : (t * s.dirs + d) * s.batch + b) * s.hidden;
}
inline int64_t StateOffset(const RecurrentSetup& s, int64_t d, int64_t b) {
  return (s.batch_first ? b * s.dirs + d : d * s.batch + b) * s.hidden;
}
inline int64_t XOffset(const RecurrentSetup& s, int64_t t, int64_t b) {
  return (s.batch_first ? b * s.seq + t : t * s.batch + b) * s.input;
}

/// State input `input` (initial_h, initial_c, dY_h, dY_c) of direction `d` as [batch][H]; empty
/// when the input is absent.
template <typename C>
std::vector<C> StateOf(const KernelContext& ctx, const RecurrentSetup& s, int input, int64_t d);

/// Stores a [batch][H] state of direction d into a state tensor (Y_h, dh0, ...).
template <typename C>
void StoreState(const std::vector<C>& v, const RecurrentSetup& s, int64_t d, Tensor& t);

/// Rows of a sequence tensor in the op's layout: X's (`d` < 0; [input]) or direction d's of Y / dY
/// ([H]). The tensor must outlive the functions.
template <typename C>
ReadRow<C> SequenceRows(const Tensor& t, const RecurrentSetup& s, int64_t d);
template <typename C>
WriteRow<C> ToSequenceRows(Tensor& t, const RecurrentSetup& s, int64_t d);

/// Whether direction `d` runs in reverse.
inline bool Reverse(const RecurrentSetup& s, int64_t d) { return s.reverse_only || d == 1; }

}  // namespace memopt::recurrent
