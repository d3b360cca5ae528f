#include "helpers/shape_test_util.h"

namespace memopt {
namespace {

using testing::InferText;
using testing::TypeAndShape;

TEST_CASE("FusedMatMul: transA/transB/transBatchA/transBatchB and batch broadcasting", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float[B, K, M] At, float[B, N, K] Bt, float[M, B, K] Ab, float[K, B, M] Abt, float[K, N] W,
       float[H, 1, M, K] A4, float[G, K, N] B3) => (float[B, M, N] Y) {
      Y = com.microsoft.FusedMatMul <transA = 1, transB = 1> (At, Bt)
      Y2 = com.microsoft.FusedMatMul <transBatchA = 1> (Ab, W)
      Y3 = com.microsoft.FusedMatMul <transA = 1, transBatchA = 1> (Abt, W)
      Y4 = com.microsoft.FusedMatMul (A4, B3)
      Y5 = com.microsoft.TransposeMatMul <transA = 1> (At, W)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, M, N]");
  CHECK(TypeAndShape(r.model.graph, "Y2") == "float[B, M, N]");
  CHECK(TypeAndShape(r.model.graph, "Y3") == "float[B, M, N]");
  CHECK(TypeAndShape(r.model.graph, "Y4") == "float[H, G, M, N]");
  CHECK(TypeAndShape(r.model.graph, "Y5") == "float[B, M, N]");
}

TEST_CASE("MatMul with vectors, Gemm with transposes", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[K] v, float[B, K, N] X, float[N] w, float[K, M] A, float[N, K] Bm, float[N] c) => (float[B, N] Y) {
      Y = MatMul(v, X)
      Z = MatMul(X, w)
      G = Gemm <transA = 1, transB = 1> (A, Bm, c)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, N]");
  CHECK(TypeAndShape(r.model.graph, "Z") == "float[B, K]");
  CHECK(TypeAndShape(r.model.graph, "G") == "float[M, N]");
}

TEST_CASE("LayerNormalization: Y, Mean and InvStdDev with stash_type", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    g (float16[B, S, 1024] X, float16[1024] w, float16[1024] b, float16[S, 1024] w2) => (float16[B, S, 1024] Y) {
      Y, mean, inv = LayerNormalization <axis = -1, epsilon = 0.00001> (X, w, b)
      Y2, mean2, inv2 = LayerNormalization <axis = 1, stash_type = 11> (X, w2, b)
      Y3, inv3 = SimplifiedLayerNormalization <axis = -1> (X, w)
      Y4, m4, i4, sum4 = com.microsoft.SkipLayerNormalization (X, X, w, b)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float16[B, S, 1024]");
  CHECK(TypeAndShape(r.model.graph, "mean") == "float[B, S, 1]");
  CHECK(TypeAndShape(r.model.graph, "inv") == "float[B, S, 1]");
  CHECK(TypeAndShape(r.model.graph, "mean2") == "double[B, 1, 1]");
  CHECK(TypeAndShape(r.model.graph, "inv3") == "float[B, S, 1]");
  CHECK(TypeAndShape(r.model.graph, "Y4") == "float16[B, S, 1024]");
  CHECK(TypeAndShape(r.model.graph, "i4") == "float[B, S, 1]");
  CHECK(TypeAndShape(r.model.graph, "sum4") == "float16[B, S, 1024]");
}

TEST_CASE("Conv, pooling and BatchNormalization", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3, 224, 224] X, float[64, 3, 7, 7] W, float[64] s, float[64] bb, float[64] m, float[64] v,
       float[N, 3, H, W2] Xs) => (float[N, 64, 112, 112] Y) {
      Y = Conv <strides = [2, 2], pads = [3, 3, 3, 3]> (X, W)
      P = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (Y)
      A = AveragePool <kernel_shape = [2, 2], strides = [2, 2], ceil_mode = 1> (P)
      G = GlobalAveragePool(A)
      Bn = BatchNormalization(Y, s, bb, m, v)
      Ys = Conv <kernel_shape = [7, 7], auto_pad = "SAME_UPPER", strides = [2, 2]> (Xs, W)
      Yv = Conv (Xs, W)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[N, 64, 112, 112]");
  CHECK(TypeAndShape(r.model.graph, "P") == "float[N, 64, 56, 56]");
  CHECK(TypeAndShape(r.model.graph, "A") == "float[N, 64, 28, 28]");
  CHECK(TypeAndShape(r.model.graph, "G") == "float[N, 64, 1, 1]");
  CHECK(TypeAndShape(r.model.graph, "Bn") == "float[N, 64, 112, 112]");
  const SymExpr h = SymExpr::Symbol("H");
  CHECK(TypeAndShape(r.model.graph, "Ys") ==
        "float[N, 64, " + SymExpr::CeilDiv(h, SymExpr(2)).ToString() + ", " +
            SymExpr::CeilDiv(SymExpr::Symbol("W2"), SymExpr(2)).ToString() + "]");
  CHECK(TypeAndShape(r.model.graph, "Yv") == "float[N, 64, H - 6, W2 - 6]");
}

TEST_CASE("Einsum, Softmax, losses", "[shape]") {
  auto r = InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[B, H, S, D] Q, float[B, H, T, D] K, float[N, C] scores, int64[N] labels) => (float[B, H, S, T] Y) {
      Y = Einsum <equation = "bhsd,bhtd->bhst"> (Q, K)
      Z = Einsum <equation = "...sd,...td"> (Q, K)
      P = Softmax <axis = -1> (Y)
      L, LP = SoftmaxCrossEntropyLoss <reduction = "mean"> (scores, labels)
      Ln = NegativeLogLikelihoodLoss <reduction = "none"> (scores, labels)
    }
  )");
  CHECK(TypeAndShape(r.model.graph, "Y") == "float[B, H, S, T]");
  CHECK(TypeAndShape(r.model.graph, "Z") == "float[B, H, S, T]");
  CHECK(TypeAndShape(r.model.graph, "P") == "float[B, H, S, T]");
  CHECK(TypeAndShape(r.model.graph, "L") == "float[]");
  CHECK(TypeAndShape(r.model.graph, "LP") == "float[N, C]");
  CHECK(TypeAndShape(r.model.graph, "Ln") == "float[N]");
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

TEST_CASE("ConvTranspose, recurrent ops, Resize", "[shape]") {
  auto r = testing::InferText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 16, H, W] X, float[16, 8, 4, 4] Wt, float[T, B, 32] S, float[2, 256, 32] Wl, float[2, 256, 64] Rl,
       float[N, 3, 10, 10] img, int64[4] sizes = {1, 3, 5, 7}) => (float[N, 8, ?, ?] Y) {
      Y = ConvTranspose <strides = [2, 2], pads = [1, 1, 1, 1]> (X, Wt)
      Ys, Yh, Yc = LSTM <hidden_size = 64, direction = "bidirectional"> (S, Wl, Rl)
      Rs = Resize(img, , , sizes)
      sc = Constant <value = float[4] {1.0, 1.0, 2.0, 0.5}> ()
      Rc = Resize <mode = "nearest"> (img, , sc)
    }
  )");
  const SymExpr h = SymExpr::Symbol("H");
  CHECK(testing::TypeAndShape(r.model.graph, "Y") ==
        "float[N, 8, " + (SymExpr(2) * h).ToString() + ", " + (SymExpr(2) * SymExpr::Symbol("W")).ToString() + "]");
  CHECK(testing::TypeAndShape(r.model.graph, "Ys") == "float[T, 2, B, 64]");
  CHECK(testing::TypeAndShape(r.model.graph, "Yh") == "float[2, B, 64]");
  CHECK(testing::TypeAndShape(r.model.graph, "Yc") == "float[2, B, 64]");
  CHECK(testing::TypeAndShape(r.model.graph, "Rs") == "float[1, 3, 5, 7]");
  CHECK(testing::TypeAndShape(r.model.graph, "Rc") == "float[N, 3, 20, 5]");
}

}  // namespace
}  // namespace memopt
