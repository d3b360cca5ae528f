#include "helpers/shape_test_util.h"

namespace memopt {
namespace {

using testing::HasDiagnosticContaining;
using testing::InferText;
using testing::TypeAndShape;
using testing::ValuesOf;

TEST_CASE("ConcatTraining: concat result and per_input_length", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[B, S, 64] X, float[B, T, 64] Z, int64[1] a, int64[1] c = {64}) => (float[B, ?, 64] Y) {
      Y, len = com.microsoft.ConcatTraining <axis = 1> (X, Z)
      sh = Shape(X)
      v, vlen = com.microsoft.ConcatTraining <axis = 0> (sh, c)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, " + (SymExpr::Symbol("S") + SymExpr::Symbol("T")).ToString() + ", 64]");
  CHECK(TypeAndShape(r.model.graph, "len") == "int64[2]");
  CHECK(ValuesOf(r.model.graph, "len") == "[S, T]");
  CHECK(ValuesOf(r.model.graph, "v") == "[B, S, 64, 64]");
  CHECK(ValuesOf(r.model.graph, "vlen") == "[3, 1]");
}

TEST_CASE("YieldOp: outputs follow non_differentiable_outputs and full_shape_outputs", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float16[B, S, 8] X, int64[B] L, float loss) => (float16[B, S, 8] dX) <float dloss> {
      dloss, dX = com.microsoft.YieldOp <full_shape_outputs = [2], non_differentiable_outputs = [1]> (loss, L, X)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "dX") == "float16[B, S, 8]");
  // Input 0 is not in full_shape_outputs: its shape comes from the declared value_info.
  CHECK(TypeAndShape(r.model.graph, "dloss") == "float[]");
}

TEST_CASE("Dropout variants: bool mask and uint32 bitmask", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float16[B, S, 1024] X, float16[1024] b, float r) => (float16[B, S, 1024] Y) {
      Y, M = Dropout(X, r)
      Y2, M2 = com.microsoft.BitmaskDropout(X, r)
      Y3, M3 = com.microsoft.BiasDropout(X, b, X, r)
      D = com.microsoft.BitmaskDropoutGrad(Y2, M2, r)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "M") == "bool[B, S, 1024]");
  const SymExpr numel = SymExpr::Symbol("B") * SymExpr::Symbol("S") * SymExpr(1024);
  CHECK(TypeAndShape(r.model.graph, "M2") == "uint32[" + SymExpr::CeilDiv(numel, SymExpr(32)).ToString() + "]");
  CHECK(TypeAndShape(r.model.graph, "Y3") == "float16[B, S, 1024]");
  CHECK(TypeAndShape(r.model.graph, "M3") == "bool[B, S, 1024]");
  CHECK(TypeAndShape(r.model.graph, "D") == "float16[B, S, 1024]");
}

TEST_CASE("Loss ops of ORT training graphs", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float16[N, 250880] logits, int64[N] labels, int64 ignore, float16 dy) => (float16 loss) {
      loss, logp = com.microsoft.SoftmaxCrossEntropyLossInternal <reduction = "mean", output_type = 10> (logits, labels, , ignore)
      dl = com.microsoft.SoftmaxCrossEntropyLossInternalGrad <reduction = "mean", output_type = 10> (dy, logp, labels, , ignore)
      none, logp2 = com.microsoft.SoftmaxCrossEntropyLossInternal <reduction = "none"> (logits, labels)
      g2 = com.microsoft.SoftmaxCrossEntropyLossGrad(dy, logp2, labels)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "loss") == "float16[]");
  CHECK(TypeAndShape(r.model.graph, "logp") == "float16[N, 250880]");
  CHECK(TypeAndShape(r.model.graph, "dl") == "float16[N, 250880]");
  CHECK(TypeAndShape(r.model.graph, "none") == "float16[N]");
  CHECK(TypeAndShape(r.model.graph, "g2") == "float16[N, 250880]");
}

TEST_CASE("Gradient ops: shape inputs, LayerNormalizationGrad, DivGrad", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[B, S, 64] X, float[B, S] dY2, float[64] w, float[B, S, 1] mean, float[B, S, 1] inv,
       float[V, 64] E, int64[B, S] ids, float[B, S, 64] dY, int64[1] z = {0}, int64[1] m1 = {-1},
       int64[1] one = {1}, float[64] d) => (float[V, 64] dE) {
      shE = Shape(E)
      dE = com.microsoft.GatherGrad(shE, ids, dY)
      shX = Shape(X)
      dXs = com.microsoft.SliceGrad(dY, shX, z, m1, one, one)
      dX, dw, db = com.microsoft.LayerNormalizationGrad(dY, X, w, mean, inv)
      dA, dB = com.microsoft.DivGrad(dY, X, d)
      r = com.microsoft.ReluGrad(dY, X)
      s = com.microsoft.SoftmaxGrad_13 <axis = -1> (dY, X)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "dE") == "float[V, 64]");
  CHECK(TypeAndShape(r.model.graph, "dXs") == "float[B, S, 64]");
  CHECK(TypeAndShape(r.model.graph, "dX") == "float[B, S, 64]");
  CHECK(TypeAndShape(r.model.graph, "dw") == "float[64]");
  CHECK(TypeAndShape(r.model.graph, "db") == "float[64]");
  CHECK(TypeAndShape(r.model.graph, "dA") == "float[B, S, 64]");
  CHECK(TypeAndShape(r.model.graph, "dB") == "float[64]");
  CHECK(TypeAndShape(r.model.graph, "r") == "float[B, S, 64]");
  CHECK(TypeAndShape(r.model.graph, "s") == "float[B, S, 64]");
}

TEST_CASE("BroadcastGradientArgs evaluates on symbolic shapes", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[B, S, 64] X, float[64] b, float[B, 1, 64] m, float[T, 64] u, float[B, S, 64] dY) => (float[B, S, 64] Y) {
      sx = Shape(X)
      sb = Shape(b)
      sm = Shape(m)
      su = Shape(u)
      ax, bx = com.microsoft.BroadcastGradientArgs(sx, sb)
      am, xm = com.microsoft.BroadcastGradientArgs(sm, sx)
      au, xu = com.microsoft.BroadcastGradientArgs(su, sx)
      Y = ReduceSum <keepdims = 1, noop_with_empty_axes = 1> (dY, ax)
      Rb = ReduceSum <keepdims = 1, noop_with_empty_axes = 1> (dY, bx)
      Rm = ReduceSum <keepdims = 1, noop_with_empty_axes = 1> (dY, am)
    }
  )");
  CHECK(ValuesOf(r.model.graph, "ax") == "[]");
  CHECK(TypeAndShape(r.model.graph, "ax") == "int64[0]");
  CHECK(ValuesOf(r.model.graph, "bx") == "[1, 0]");
  CHECK(ValuesOf(r.model.graph, "am") == "[1]");
  CHECK(ValuesOf(r.model.graph, "xm") == "[]");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, S, 64]");
  CHECK(TypeAndShape(r.model.graph, "Rb") == "float[1, 1, 64]");
  CHECK(TypeAndShape(r.model.graph, "Rm") == "float[B, 1, 64]");
  // T vs S cannot be decided: both lengths are fresh, with a diagnostic.
  CHECK(ValuesOf(r.model.graph, "au") == "none");
  CHECK(HasDiagnosticContaining(r.stats, "BroadcastGradientArgs cannot compare"));
}

TEST_CASE("ATen embedding and embedding_backward, unknown operators", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15, "org.pytorch.aten" : 1]>
    g (float16[250880, 1024] W, int64[B, S] ids, int64 pad, bool f, float16[B, S, 1024] dY, int64[1] z = {0})
      => (float16[B, S, 1024] Y) <float[B] other> {
      Y = org.pytorch.aten.ATen <operator = "embedding"> (W, ids, pad, f, f)
      sh = Shape(W)
      n = Gather(sh, z)
      dW = org.pytorch.aten.ATen <operator = "embedding_backward"> (dY, ids, n, pad, f, f)
      other = org.pytorch.aten.ATen <operator = "weird_op"> (W)
      nothing = org.pytorch.aten.ATen <operator = "weird_op"> (W)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float16[B, S, 1024]");
  CHECK(TypeAndShape(r.model.graph, "dW") == "float16[250880, 1024]");
  CHECK(TypeAndShape(r.model.graph, "other") == "float[B]");
  CHECK(TypeAndShape(r.model.graph, "nothing") == "undefined[?]");
  CHECK(HasDiagnosticContaining(r.stats, "ATen operator 'weird_op' has no shape rule"));
  REQUIRE(r.stats.ops_without_rule.size() == 1);
  CHECK(r.stats.ops_without_rule[0] == "org.pytorch.aten::ATen");
}

TEST_CASE("InPlaceAccumulatorV2, PassThrough, FastGelu, BiasGelu", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[500, 784] buf, float[500, 784] grad, bool[1] reset, float16[B, S, 4096] X, float16[4096] b)
      => (bool[1] done) {
      done, out = com.microsoft.InPlaceAccumulatorV2(buf, grad, reset)
      p1, p2 = com.microsoft.PassThrough(X, b)
      fg = com.microsoft.FastGelu(X, b)
      bg = com.microsoft.BiasGelu(X, b)
      bgd = com.microsoft.BiasFastGeluGrad_dX(fg, X, b)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "done") == "bool[1]");
  CHECK(TypeAndShape(r.model.graph, "out") == "float[500, 784]");
  CHECK(TypeAndShape(r.model.graph, "p2") == "float16[4096]");
  CHECK(TypeAndShape(r.model.graph, "fg") == "float16[B, S, 4096]");
  CHECK(TypeAndShape(r.model.graph, "bg") == "float16[B, S, 4096]");
  CHECK(TypeAndShape(r.model.graph, "bgd") == "float16[B, S, 4096]");
}

}  // namespace
}  // namespace memopt
