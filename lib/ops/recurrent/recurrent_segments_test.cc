// The recurrent backward a segment of steps at a time (recurrent_util.h: BackwardDirection) gives
// the one-segment gradients for every segment length: LSTM with peepholes, GRU both ways, RNN,
// forward and reverse directions, entries of different lengths; and the forward a segment at a
// time (RunSteps) gives the one-pass Y and states. In double (BLAS step products) and in float
// (R's panels, vector activations), and the float engine agrees with the double one.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <string>

#include "exec/kernels/kernel_util.h"
#include "ops/recurrent/recurrent_util.h"

namespace memopt::recurrent {
namespace {

std::vector<double> Values(int64_t n, int64_t a, int64_t m, double scale) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = scale * (static_cast<double>((i * a) % m) / (m / 2.0) - 1.0);
  return v;
}

template <typename C>
C Identity(C v) {
  return v;
}

template <typename C>
std::vector<C> As(const std::vector<double>& v) {
  return std::vector<C>(v.begin(), v.end());
}

/// Everything one engine run gives, in double.
struct Results {
  std::vector<double> dx, w, r, wb, rb, p, h0, c0, y, h_last;
};

struct Case {
  Cell cell;
  bool reverse;
  bool linear_before_reset;
};

/// Runs case `c` in C with segments of T steps, then 1, 2 and 3 (each against the first), and the
/// forward in one pass and in two; returns the one-segment results.
template <typename C>
Results RunCase(const Case& c, double tol) {
  const int64_t T = 5, B = 3, I = 2, H = 3;
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
  const std::vector<C> x = As<C>(Values(T * B * I, 7, 11, 1.0));
  DirectionInputs<C> in;
  in.x = [&x, B, I](int64_t t, int64_t b, C* row) {
    std::copy(x.begin() + (t * B + b) * I, x.begin() + (t * B + b + 1) * I, row);
  };
  in.w = As<C>(Values(GH * I, 5, 13, 0.6)), in.r = As<C>(Values(GH * H, 3, 17, 0.5));
  in.wb = As<C>(Values(GH, 11, 7, 0.2)), in.rb = As<C>(Values(GH, 13, 5, 0.2));
  in.p = As<C>(c.cell == Cell::kLstm ? Values(3 * H, 7, 9, 0.3) : std::vector<double>(static_cast<size_t>(3 * H), 0.0));
  in.h0 = As<C>(Values(B * H, 5, 7, 0.4)), in.c0 = As<C>(Values(B * H, 3, 11, 0.4));
  PreparePanels(s, in);
  const std::vector<C> dy_all = As<C>(Values(T * B * H, 3, 19, 1.0)), dy_h = As<C>(Values(B * H, 7, 5, 1.0));
  const ReadRow<C> dy = [&dy_all, B, H](int64_t t, int64_t b, C* row) {
    std::copy(dy_all.begin() + (t * B + b) * H, dy_all.begin() + (t * B + b + 1) * H, row);
  };
  // dX rows into a [T][B][I] vector; each row must come once.
  const auto rows_into = [B, I](std::vector<C>& dx) {
    return [&dx, B, I](int64_t t, int64_t b, const C* row) {
      for (int64_t i = 0; i < I; ++i) {
        REQUIRE(dx[(t * B + b) * I + i] == C(0));
        dx[(t * B + b) * I + i] = row[i];
      }
    };
  };
  const std::vector<C> dy_c = c.cell == Cell::kLstm ? As<C>(Values(B * H, 11, 13, 1.0)) : std::vector<C>();
  const auto same = [tol](const std::vector<C>& a, const std::vector<C>& b, const char* what) {
    INFO(what);
    REQUIRE(a.size() == b.size());
    size_t bad = a.size();
    for (size_t i = 0; i < a.size() && bad == a.size(); ++i) {
      if (!(std::abs(a[i] - b[i]) <= tol * (1 + std::abs(b[i])))) bad = i;
    }
    INFO("first element that differs: " << bad);
    CHECK(bad == a.size());
  };
  std::vector<C> dx_one(x.size(), C(0));
  DirectionGrads<C> one;
  BackwardDirection<C>(s, in, 0, Identity<C>, T, dy, dy_h, dy_c, rows_into(dx_one), one);
  for (int64_t k : {1, 2, 3}) {
    INFO("segments of " << k << " steps");
    std::vector<C> dx(x.size(), C(0));
    DirectionGrads<C> g;
    BackwardDirection<C>(s, in, 0, Identity<C>, k, dy, dy_h, dy_c, rows_into(dx), g);
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
  DirectionOutputs<C> whole, parts;
  whole.h_last = parts.h_last = in.h0;
  if (c.cell == Cell::kLstm) whole.c_last = parts.c_last = in.c0;
  std::vector<C> y_whole(static_cast<size_t>(T * B * H), C(0)), y_parts = y_whole;
  const auto y_into = [B, H](std::vector<C>& y) {
    return [&y, B, H](int64_t t, int64_t b, const C* row) { std::copy(row, row + H, y.begin() + (t * B + b) * H); };
  };
  whole.y = y_into(y_whole);
  parts.y = y_into(y_parts);
  RunSteps<C>(s, in, 0, Identity<C>, 0, T, whole, nullptr);
  RunSteps<C>(s, in, 0, Identity<C>, 0, 2, parts, nullptr);
  RunSteps<C>(s, in, 0, Identity<C>, 2, T, parts, nullptr);
  same(y_parts, y_whole, "Y");
  same(parts.h_last, whole.h_last, "h_last");
  const auto d = [](const std::vector<C>& v) { return std::vector<double>(v.begin(), v.end()); };
  return Results{d(dx_one), d(one.w), d(one.r), d(one.wb), d(one.rb), d(one.p), d(one.h0), d(one.c0), d(y_whole),
                 d(whole.h_last)};
}

TEST_CASE("recurrent backward by segments equals the one-segment gradients", "[recurrent][grad]") {
  for (const Case& c : {Case{Cell::kLstm, false, false}, Case{Cell::kLstm, true, false}, Case{Cell::kGru, false, false},
                        Case{Cell::kGru, true, true}, Case{Cell::kRnn, true, false}}) {
    INFO("cell " << static_cast<int>(c.cell) << ", reverse " << c.reverse << ", linear_before_reset "
                 << c.linear_before_reset);
    Results exact, single;
    {
      INFO("double");
      exact = RunCase<double>(c, 1e-12);
    }
    {
      INFO("float");
      single = RunCase<float>(c, 1e-5);
    }
    // The float engine (panels, vector activations) against the double one (BLAS, libm).
    const std::vector<double>* pairs[][2] = {{&single.dx, &exact.dx}, {&single.w, &exact.w},   {&single.r, &exact.r},
                                             {&single.wb, &exact.wb}, {&single.rb, &exact.rb}, {&single.p, &exact.p},
                                             {&single.h0, &exact.h0}, {&single.c0, &exact.c0}, {&single.y, &exact.y},
                                             {&single.h_last, &exact.h_last}};
    double norm = 0;
    for (const auto& pair : pairs) {
      REQUIRE(pair[0]->size() == pair[1]->size());
      for (size_t i = 0; i < pair[0]->size(); ++i) {
        CHECK(std::abs((*pair[0])[i] - (*pair[1])[i]) <= 2e-5 * (1 + std::abs((*pair[1])[i])));
        norm += std::abs((*pair[1])[i]);
      }
    }
    // Nothing is all zeros: the comparisons above compare something.
    CHECK(norm > 0.1);
  }
}

TEST_CASE("recurrent engine: groups of entries on the threads give the one-thread bits", "[recurrent][grad]") {
  // Large enough that RunSteps and BackwardDirection split the entries over the threads (float,
  // R's panels): 1, 2 and 3 threads must give the same Y, states and gradients, bit for bit.
  constexpr int64_t T = 6, B = 7, I = 5, H = 40;
  for (Cell cell : {Cell::kLstm, Cell::kGru}) {
    RecurrentSetup s;
    s.cell = cell;
    s.gates = cell == Cell::kLstm ? 4 : 3;
    s.seq = T, s.batch = B, s.input = I, s.hidden = H;
    const Activation sig{Activation::Kind::kSigmoid}, th{Activation::Kind::kTanh};
    s.activations = {cell == Cell::kLstm ? std::vector<Activation>{sig, th, th} : std::vector<Activation>{sig, th}};
    s.lengths = {6, 3, 6, 1, 5, 6, 2};
    const int64_t GH = s.gates * H;
    const std::vector<float> x = As<float>(Values(T * B * I, 7, 11, 1.0));
    DirectionInputs<float> in;
    in.x = [&x](int64_t t, int64_t b, float* row) {
      std::copy(x.begin() + (t * B + b) * I, x.begin() + (t * B + b + 1) * I, row);
    };
    in.w = As<float>(Values(GH * I, 5, 13, 0.4)), in.r = As<float>(Values(GH * H, 3, 17, 0.2));
    in.wb = As<float>(Values(GH, 11, 7, 0.2)), in.rb = As<float>(Values(GH, 13, 5, 0.2));
    in.p = As<float>(cell == Cell::kLstm ? Values(3 * H, 7, 9, 0.3) : std::vector<double>(static_cast<size_t>(3 * H), 0.0));
    in.h0 = As<float>(Values(B * H, 5, 7, 0.4)), in.c0 = As<float>(Values(B * H, 3, 11, 0.4));
    PreparePanels(s, in);
    const std::vector<float> dy_all = As<float>(Values(T * B * H, 3, 19, 1.0));
    const ReadRow<float> dy = [&dy_all](int64_t t, int64_t b, float* row) {
      std::copy(dy_all.begin() + (t * B + b) * H, dy_all.begin() + (t * B + b + 1) * H, row);
    };
    const auto run = [&](int threads) {
      SetNumThreads(threads);
      std::vector<float> y(static_cast<size_t>(T * B * H), 0.0f), dx(x.size(), 0.0f);
      DirectionOutputs<float> out;
      out.y = [&y, B, H](int64_t t, int64_t b, const float* row) { std::copy(row, row + H, y.begin() + (t * B + b) * H); };
      RunDirection<float>(s, in, 0, Identity<float>, out);
      DirectionGrads<float> g;
      BackwardDirection<float>(s, in, 0, Identity<float>, 4, dy, {}, {},
                               [&dx, B, I](int64_t t, int64_t b, const float* row) {
                                 std::copy(row, row + I, dx.begin() + (t * B + b) * I);
                               },
                               g);
      std::vector<float> all = y;
      for (const std::vector<float>* v : {&out.h_last, &dx, &g.w, &g.r, &g.wb, &g.rb, &g.p, &g.h0, &g.c0}) {
        all.insert(all.end(), v->begin(), v->end());
      }
      return all;
    };
    const int before = NumThreads();
    const std::vector<float> one = run(1), two = run(2), three = run(3);
    SetNumThreads(before);
    INFO("cell " << static_cast<int>(cell));
    REQUIRE(one.size() == two.size());
    size_t differ = 0;
    double norm = 0;
    for (size_t i = 0; i < one.size(); ++i) {
      differ += one[i] != two[i] || one[i] != three[i];
      norm += std::abs(one[i]);
    }
    CHECK(differ == 0);
    CHECK(norm > 1.0);
  }
}

}  // namespace
}  // namespace memopt::recurrent
