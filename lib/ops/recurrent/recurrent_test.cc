// RNN, GRU and LSTM on the CPU against the ONNX backend node tests (shared data), and their
// gradients (ai.memopt RNNGrad / GRUGrad / LSTMGrad, which recompute the forward) against finite
// differences over every attribute that changes the recurrence.
#include <filesystem>

#include "exec/tensor_io.h"
#include "grad/grad_check_util.h"
#include "helpers/training_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::CountOps;
using testing::GradCheck;
using testing::RunGradCheck;

TEST_CASE("recurrent ops pass the ONNX node tests", "[recurrent]") {
  auto root = testing::SharedData("onnx_node_tests/node");
  if (!root) return;
  int cases = 0;
  for (const char* name : {"test_lstm_defaults", "test_lstm_with_initial_bias", "test_lstm_with_peepholes",
                           "test_lstm_batchwise", "test_gru_defaults", "test_gru_with_initial_bias",
                           "test_gru_seq_length", "test_gru_batchwise", "test_simple_rnn_defaults",
                           "test_simple_rnn_with_initial_bias", "test_simple_rnn_batchwise", "test_rnn_seq_length"}) {
    const std::filesystem::path dir = std::filesystem::path(*root) / name;
    if (!std::filesystem::exists(dir)) continue;
    INFO(name);
    auto model = LoadModel((dir / "model.onnx").string());
    REQUIRE(model.ok());
    auto feeds = ReadInputDir((dir / "test_data_set_0").string(), model->graph);
    INFO(feeds.status().message());
    REQUIRE(feeds.ok());
    auto run = Execute(*model, *feeds);
    INFO(run.status().message());
    REQUIRE(run.ok());
    const Graph& g = model->graph;
    for (size_t i = 0; i < g.outputs.size(); ++i) {
      auto want = ReadTensorFile((dir / "test_data_set_0" / ("output_" + std::to_string(i) + ".pb")).string());
      REQUIRE(want.ok());
      const Tensor& got = run->outputs.at(g.value(g.outputs[i]).name);
      REQUIRE(got.shape() == want->shape());
      for (int64_t k = 0; k < got.numel(); ++k) {
        INFO("output " << i << " element " << k);
        CHECK(std::abs(got.GetAsDouble(k) - want->GetAsDouble(k)) <= 1e-6 + 1e-4 * std::abs(want->GetAsDouble(k)));
      }
    }
    ++cases;
  }
  CHECK(cases == 12);
}

/// One recurrent node on double tensors, every input and state trainable; outputs through Sin so
/// that each output element weighs differently.
GradCheck RecurrentCase(const std::string& op, const std::string& signature, const std::string& inputs,
                        const std::string& outputs, const std::string& attrs) {
  GradCheck c;
  c.text = "<ir_version: 8, opset_import: [\"\" : 14]>\n g " + signature + " {\n " + outputs + " = " + op + " <" +
           attrs + "> (" + inputs + ")\n ys = Sin(y)\n }";
  c.options.trainable = "^(x|w|r|b|h0|c0|p)$";
  return c;
}

TEST_CASE("grad check: LSTM", "[grad][gradcheck][recurrent]") {
  SECTION("defaults (PyTorch's nn.LSTM): Y and Y_h used") {
    auto c = RecurrentCase("LSTM",
                           "(double[3, 2, 4] x, double[1, 12, 4] w, double[1, 12, 3] r, double[1, 24] b) => "
                           "(double[3, 1, 2, 3] ys, double[1, 2, 3] yh)",
                           "x, w, r, b", "y, yh", "hidden_size = 3");
    auto result = RunGradCheck(c);
    CHECK(CountOps(result, "LSTMGrad") == 1);
  }
  SECTION("bidirectional, sequence_lens, initial states, peepholes, Y_c") {
    auto c = RecurrentCase("LSTM",
                           "(double[4, 3, 2] x, double[2, 8, 2] w, double[2, 8, 2] r, double[2, 16] b, "
                           "double[2, 3, 2] h0, double[2, 3, 2] c0, double[2, 6] p) => "
                           "(double[4, 2, 3, 2] ys, double[2, 3, 2] yh, double[2, 3, 2] yc)",
                           "x, w, r, b, lens, h0, c0, p", "y, yh, yc", "hidden_size = 2, direction = \"bidirectional\"");
    c.fixed["lens"] = [] {
      Tensor t(DataType::kInt32, {3});
      t.SetFromDouble(0, 4), t.SetFromDouble(1, 2), t.SetFromDouble(2, 3);
      return t;
    }();
    c.text.insert(c.text.find(") =>"), ", int32[3] lens");
    RunGradCheck(c);
  }
  SECTION("reverse, layout 1, clip, input_forget, custom activations") {
    auto c = RecurrentCase("LSTM",
                           "(double[2, 3, 2] x, double[1, 8, 2] w, double[1, 8, 2] r) => (double[2, 3, 1, 2] ys)",
                           "x, w, r", "y",
                           "hidden_size = 2, direction = \"reverse\", layout = 1, clip = 0.7, input_forget = 1, "
                           "activations = [\"HardSigmoid\", \"ScaledTanh\", \"Softsign\"], "
                           "activation_alpha = [0.3, 1.5], activation_beta = [0.4, 0.8]");
    RunGradCheck(c);
  }
}

TEST_CASE("grad check: GRU", "[grad][gradcheck][recurrent]") {
  for (int lbr : {0, 1}) {
    SECTION("linear_before_reset " + std::to_string(lbr)) {
      auto c = RecurrentCase("GRU",
                             "(double[3, 2, 2] x, double[1, 9, 2] w, double[1, 9, 3] r, double[1, 18] b, "
                             "double[1, 2, 3] h0) => (double[3, 1, 2, 3] ys, double[1, 2, 3] yh)",
                             "x, w, r, b, , h0", "y, yh", "hidden_size = 3, linear_before_reset = " + std::to_string(lbr));
      auto result = RunGradCheck(c);
      CHECK(CountOps(result, "GRUGrad") == 1);
    }
  }
  SECTION("bidirectional, sequence_lens, layout 1, Elu/LeakyRelu") {
    auto c = RecurrentCase("GRU",
                           "(double[2, 3, 2] x, double[2, 6, 2] w, double[2, 6, 2] r, double[2, 12] b) => "
                           "(double[2, 3, 2, 2] ys)",
                           "x, w, r, b, lens", "y",
                           "hidden_size = 2, direction = \"bidirectional\", layout = 1, "
                           "activations = [\"Sigmoid\", \"Elu\", \"Sigmoid\", \"LeakyRelu\"], activation_alpha = [0.9, 0.2]");
    Tensor lens(DataType::kInt32, {2});
    lens.SetFromDouble(0, 1), lens.SetFromDouble(1, 3);
    c.fixed["lens"] = lens;
    c.text.insert(c.text.find(") =>"), ", int32[2] lens");
    RunGradCheck(c);
  }
}

TEST_CASE("grad check: RNN", "[grad][gradcheck][recurrent]") {
  SECTION("tanh, initial state, Y_h only") {
    auto c = RecurrentCase("RNN",
                           "(double[4, 2, 3] x, double[1, 2, 3] w, double[1, 2, 2] r, double[1, 4] b, "
                           "double[1, 2, 2] h0) => (double[1, 2, 2] ys)",
                           "x, w, r, b, , h0", "dummy, y", "hidden_size = 2");
    RunGradCheck(c);
  }
  SECTION("bidirectional Relu / Affine with clip") {
    auto c = RecurrentCase("RNN",
                           "(double[3, 2, 2] x, double[2, 2, 2] w, double[2, 2, 2] r) => (double[3, 2, 2, 2] ys)",
                           "x, w, r", "y",
                           "hidden_size = 2, direction = \"bidirectional\", clip = 0.8, "
                           "activations = [\"Relu\", \"Affine\"], activation_alpha = [0.7], activation_beta = [0.1]");
    RunGradCheck(c);
  }
}

TEST_CASE("recurrent ops: input errors name what does not match", "[recurrent]") {
  auto run = [](int64_t r_cols, int64_t first_length) {
    const std::string r = "float[1, 12, " + std::to_string(r_cols) + "]";
    auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 14]>
g (float[3, 2, 4] x, float[1, 12, 4] w, )" + r + R"( r, int32[2] lens) => (float[3, 1, 2, 3] y) {
  y = LSTM <hidden_size = 3> (x, w, r, , lens)
}
)");
    REQUIRE(model.ok());
    Tensor lens(DataType::kInt32, {2});
    lens.SetFromDouble(0, static_cast<double>(first_length));
    auto result = Execute(*model, {{"x", Tensor(DataType::kFloat, {3, 2, 4})},
                                   {"w", Tensor(DataType::kFloat, {1, 12, 4})},
                                   {"r", Tensor(DataType::kFloat, {1, 12, r_cols})},
                                   {"lens", lens}});
    REQUIRE_FALSE(result.ok());
    return result.status().message();
  };
  CHECK(run(3, 5) == "node 'LSTM#0' (LSTM): sequence_lens[0] = 5 is outside [0, 3]");
  CHECK(run(4, 1) == "node 'LSTM#0' (LSTM): R float[1, 12, 4] must be [1, 12, 3]");
}

TEST_CASE("recurrent ops on float16 and bfloat16 follow the float32 results", "[recurrent][half]") {
  // The engine computes 16-bit tensors in float and rounds the carried state to the type each
  // step: the forward and the gradient (bidirectional, entries of different lengths) stay within
  // two of the type's ulps of the float32 results, relative to each output's largest value (rounding
  // float16's state as bfloat16 fails it).
  const int64_t T = 5, B = 3, I = 4, H = 3;
  const auto values = [](int64_t n, int mul, int mod) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>((i * mul) % mod - mod / 2) / 64.0;
    return v;
  };
  for (const char* op : {"LSTM", "GRU"}) {
    const bool lstm = std::string(op) == "LSTM";
    const int64_t GH = (lstm ? 4 : 3) * H;
    const auto run = [&](DataType t, bool grad) {
      testing::KernelCall c(grad ? std::string(kMemoptDomain) : std::string(), std::string(op) + (grad ? "Grad" : ""),
                            grad ? 5 : (lstm ? 3 : 2));
      c.Int("hidden_size", H).String("direction", "bidirectional");
      c.Input(testing::MakeTensor(t, {T, B, I}, values(T * B * I, 7, 101)));
      c.Input(testing::MakeTensor(t, {2, GH, I}, values(2 * GH * I, 5, 61)));
      c.Input(testing::MakeTensor(t, {2, GH, H}, values(2 * GH * H, 3, 53)));
      c.Input(testing::MakeTensor(t, {2, 2 * GH}, values(4 * GH, 11, 41)));
      c.Input(testing::MakeTensor(DataType::kInt32, {B}, {5, 2, 4}));
      c.Input(std::nullopt);  // initial_h
      if (lstm) c.Input(std::nullopt).Input(std::nullopt);  // initial_c, P
      if (grad) c.Input(testing::MakeTensor(t, {T, 2, B, H}, values(T * 2 * B * H, 13, 97)));
      return testing::MustRun(c);
    };
    for (bool grad : {false, true}) {
      const std::vector<Tensor> f = run(DataType::kFloat, grad);
      for (DataType t : {DataType::kFloat16, DataType::kBfloat16}) {
        INFO(op << (grad ? "Grad " : " ") << DataTypeName(t));
        const std::vector<Tensor> h = run(t, grad);
        const double ulp = t == DataType::kFloat16 ? 1.0 / 1024 : 1.0 / 128;
        REQUIRE(h.size() == f.size());
        for (size_t o = 0; o < f.size(); ++o) {
          INFO("output " << o);
          REQUIRE(h[o].dtype() == t);
          const std::vector<double> want = testing::Values(f[o]), got = testing::Values(h[o]);
          double scale = 0;
          for (double v : want) scale = std::max(scale, std::abs(v));
          CHECK(scale > 0.05);  // something to compare
          testing::CheckClose(got, want, 0.0, 2 * ulp * scale);
        }
      }
    }
  }
}

}  // namespace
}  // namespace memopt
