// The recurrent backward a segment of steps at a time (recurrent_util.h: BackwardDirection) gives
// the one-segment gradients for every segment length: LSTM with peepholes, GRU both ways, RNN,
// forward and reverse directions, entries of different lengths; and the forward a segment at a
// time (RunSteps) gives the one-pass Y and states.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <string>

#include "ops/recurrent/recurrent_util.h"

namespace memopt::recurrent {
namespace {

std::vector<double> Values(int64_t n, int64_t a, int64_t m, double scale) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = scale * (static_cast<double>((i * a) % m) / (m / 2.0) - 1.0);
  return v;
}

double Identity(double v) { return v; }

struct Case {
  Cell cell;
  bool reverse;
  bool linear_before_reset;
};

TEST_CASE("recurrent backward by segments equals the one-segment gradients", "[recurrent][grad]") {
  const int64_t T = 5, B = 3, I = 2, H = 3;
  for (const Case& c : {Case{Cell::kLstm, false, false}, Case{Cell::kLstm, true, false}, Case{Cell::kGru, false, false},
                        Case{Cell::kGru, true, true}, Case{Cell::kRnn, true, false}}) {
    RecurrentSetup s;
    s.cell = c.cell;
    s.gates = c.cell == Cell::kLstm ? 4 : c.cell == Cell::kGru ? 3 : 1;
    s.seq = T, s.batch = B, s.input = I, s.hidden = H, s.dirs = 1;
    s.reverse_only = c.reverse;
    s.linear_before_reset = c.linear_before_reset;
    const Activation sig{Activation::Kind::kSigmoid}, th{Activation::Kind::kTanh};
    s.activations = {c.cell == Cell::kLstm ? std::vector<Activation>{sig, th, th}
                     : c.cell == Cell::kGru ? std::vector<Activation>{sig, th}
                                            : std::vector<Activation>{th}};
    s.lengths = {5, 2, 4};
    const int64_t GH = s.gates * H;
    const std::vector<double> x = Values(T * B * I, 7, 11, 1.0);
    DirectionInputs in;
    in.x = [&x, B, I](int64_t t, int64_t b, double* row) {
      std::copy(x.begin() + (t * B + b) * I, x.begin() + (t * B + b + 1) * I, row);
    };
    in.w = Values(GH * I, 5, 13, 0.6), in.r = Values(GH * H, 3, 17, 0.5);
    in.wb = Values(GH, 11, 7, 0.2), in.rb = Values(GH, 13, 5, 0.2);
    in.p = c.cell == Cell::kLstm ? Values(3 * H, 7, 9, 0.3) : std::vector<double>(static_cast<size_t>(3 * H), 0.0);
    in.h0 = Values(B * H, 5, 7, 0.4), in.c0 = Values(B * H, 3, 11, 0.4);
    const std::vector<double> dy_all = Values(T * B * H, 3, 19, 1.0), dy_h = Values(B * H, 7, 5, 1.0);
    const ReadRow dy = [&dy_all, B, H](int64_t t, int64_t b, double* row) {
      std::copy(dy_all.begin() + (t * B + b) * H, dy_all.begin() + (t * B + b + 1) * H, row);
    };
    // dX rows into a [T][B][I] vector; each row must come once.
    const auto rows_into = [B, I](std::vector<double>& dx) {
      return [&dx, B, I](int64_t t, int64_t b, const double* row) {
        for (int64_t i = 0; i < I; ++i) {
          REQUIRE(dx[(t * B + b) * I + i] == 0.0);
          dx[(t * B + b) * I + i] = row[i];
        }
      };
    };
    const std::vector<double> dy_c = c.cell == Cell::kLstm ? Values(B * H, 11, 13, 1.0) : std::vector<double>();
    INFO("cell " << static_cast<int>(c.cell) << ", reverse " << c.reverse << ", linear_before_reset "
                 << c.linear_before_reset);
    std::vector<double> dx_one(x.size(), 0.0);
    DirectionGrads one;
    BackwardDirection(s, in, 0, Identity, T, dy, dy_h, dy_c, rows_into(dx_one), one);
    for (int64_t k : {1, 2, 3}) {
      INFO("segments of " << k << " steps");
      std::vector<double> dx(x.size(), 0.0);
      DirectionGrads g;
      BackwardDirection(s, in, 0, Identity, k, dy, dy_h, dy_c, rows_into(dx), g);
      const auto same = [](const std::vector<double>& a, const std::vector<double>& b, const char* what) {
        INFO(what);
        REQUIRE(a.size() == b.size());
        size_t bad = a.size();
        for (size_t i = 0; i < a.size() && bad == a.size(); ++i) {
          if (!(std::abs(a[i] - b[i]) <= 1e-12 * (1 + std::abs(b[i])))) bad = i;
        }
        INFO("first element that differs: " << bad);
        CHECK(bad == a.size());
      };
      same(dx, dx_one, "dX");
      same(g.w, one.w, "dW");
      same(g.r, one.r, "dR");
      same(g.wb, one.wb, "dWb");
      same(g.rb, one.rb, "dRb");
      same(g.p, one.p, "dP");
      same(g.h0, one.h0, "dh0");
      same(g.c0, one.c0, "dc0");
    }
    // The forward in segments of 2 and 3 steps against one pass.
    DirectionOutputs whole, parts;
    whole.h_last = parts.h_last = in.h0;
    if (c.cell == Cell::kLstm) whole.c_last = parts.c_last = in.c0;
    std::vector<double> y_whole(static_cast<size_t>(T * B * H), 0.0), y_parts = y_whole;
    const auto y_into = [B, H](std::vector<double>& y) {
      return [&y, B, H](int64_t t, int64_t b, const double* row) { std::copy(row, row + H, y.begin() + (t * B + b) * H); };
    };
    whole.y = y_into(y_whole);
    parts.y = y_into(y_parts);
    RunSteps(s, in, 0, Identity, 0, T, whole, nullptr);
    RunSteps(s, in, 0, Identity, 0, 2, parts, nullptr);
    RunSteps(s, in, 0, Identity, 2, T, parts, nullptr);
    for (size_t i = 0; i < y_whole.size(); ++i) REQUIRE(std::abs(y_parts[i] - y_whole[i]) <= 1e-12);
    for (size_t i = 0; i < whole.h_last.size(); ++i) REQUIRE(std::abs(parts.h_last[i] - whole.h_last[i]) <= 1e-12);
    // Nothing is all zeros: the comparisons above compare something.
    double norm = 0;
    for (double v : one.w) norm += std::abs(v);
    for (double v : dx_one) norm += std::abs(v);
    for (double v : y_whole) norm += std::abs(v);
    CHECK(norm > 0.1);
  }
}

}  // namespace
}  // namespace memopt::recurrent
