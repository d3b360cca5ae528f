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
// The values are computed in double. The hidden state carried from step to step is rounded to the
// element type (what Y holds), so that the backward, which runs the forward again from the op's
// inputs (memopt's LSTM/GRU/RNN gradients, recurrent_grad_cpu.cc: nothing of the forward is kept),
// recomputes exactly the forward's gates and states.
#pragma once

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

/// One direction's tensors in the engine's layout, as doubles: x [seq][batch][input] (shared by
/// the directions), w [G*H][input], r [G*H][H], wb, rb [G*H], p [3H] (zeros when absent), h0, c0
/// [batch][H].
struct DirectionInputs {
  const double* x = nullptr;
  std::vector<double> w, r, wb, rb, p, h0, c0;
};

/// What the backward needs of one direction's forward, per time t and batch entry b: the gates'
/// pre-activations and values [t][b][G*H] (GRU: the third block is the candidate's; `rh` keeps
/// R_h h + Rb_h for linear_before_reset), the cell states (LSTM) and the states each step read.
/// Times past an entry's length stay 0.
struct DirectionTrace {
  std::vector<double> pre, act, c, rh, h_prev, c_prev;
};

/// One direction's outputs: y [seq][batch][H] in time order (0 past an entry's length), and the
/// last hidden and cell states [batch][H].
struct DirectionOutputs {
  std::vector<double> y, h_last, c_last;
};

/// Rounds a value to the element type the kernel writes (what Y holds).
using RoundFn = double (*)(double);
RoundFn RoundingFor(DataType dtype);

/// Runs direction `d`, carrying the hidden state rounded with `round`; records the trace when
/// `trace` is given (the backward's recomputation).
void RunDirection(const RecurrentSetup& s, const DirectionInputs& in, int64_t d, RoundFn round, DirectionOutputs& out,
                  DirectionTrace* trace);

/// The gradients of one direction's weights and initial states.
struct DirectionGrads {
  std::vector<double> w, r, wb, rb, p, h0, c0;
};

/// Backward of direction `d` from the trace of its recomputation: dy [seq][batch][H] (time order),
/// dy_h / dy_c [batch][H] (empty when they have no gradient). Adds into dx [seq][batch][input].
void BackwardDirection(const RecurrentSetup& s, const DirectionInputs& in, int64_t d, const DirectionTrace& trace,
                       const std::vector<double>& dy, const std::vector<double>& dy_h, const std::vector<double>& dy_c,
                       std::vector<double>& dx, DirectionGrads& out);

/// Reads direction `d`'s weights, biases, peepholes and initial states from the op's inputs
/// (X, W, R, B, sequence_lens, initial_h, initial_c, P: the forward's order, which the gradient
/// ops keep).
DirectionInputs DirectionOf(const KernelContext& ctx, const RecurrentSetup& s, int64_t d, const double* x);

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

/// State input `input` (initial_h, initial_c, dY_h, dY_c) of direction `d` as [batch][H] doubles;
/// empty when the input is absent.
std::vector<double> StateOf(const KernelContext& ctx, const RecurrentSetup& s, int input, int64_t d);

/// X as doubles in [seq][batch][input] order (layout 1 transposed).
std::vector<double> SequenceMajorX(const KernelContext& ctx, const RecurrentSetup& s);

/// Whether direction `d` runs in reverse.
inline bool Reverse(const RecurrentSetup& s, int64_t d) { return s.reverse_only || d == 1; }

}  // namespace memopt::recurrent
