// MatMul (numpy semantics: 1-D promotion, broadcast batch dims), com.microsoft FusedMatMul and
// TransposeMatMul (alpha, transA, transB, transBatchA, transBatchB) and Gemm through cuBLAS, for
// float32, float16 and bfloat16 with float accumulation. TF32 is used for float32 only when the
// run allows it (CudaKernelContext::allow_tf32), so results stay comparable with the CPU.
//
// cuBLAS is column-major: a row-major C = A * B is computed as the column-major C^T = B^T * A^T,
// i.e. gemm(B, A) with the row-major buffers passed unchanged. Each operand is described as the
// CPU reference does (lib/ops/matmul/matmul_cpu.cc): where its logical matrices live (transpose flag,
// row stride, distance between batch entries), which covers the transposes and the transBatch
// layouts as cuBLAS leading dimensions and batch strides, without copying.
#include <string>
#include <vector>

#include "cublas_loader.h"
#include "cuda_kernel.h"
#include "exec/kernels/matmul_plan.h"
#include "elem_type.h"
#include "exec/tensor.h"

namespace memopt::cuda {
namespace {

Status Cublas(const CudaKernelContext& ctx, const CublasApi& api, cublasStatus_t st) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return InternalError("node " + ctx.node->Describe() + ": cuBLAS failed: " + api.status_name(st) + " (" +
                       api.status_string(st) + ")");
}

cudaDataType CudaType(DataType t) {
  switch (t) {
    case DataType::kFloat16: return CUDA_R_16F;
    case DataType::kBfloat16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

/// Row-major Y[batch][m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * Y, `batch` products
/// with element strides sa, sb (0 = shared) and m*n for Y. lda/ldb: row strides of the stored
/// A and B (k or m for A, n or k for B when the operands are packed).
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* y = nullptr;
  int64_t lda = 0, ldb = 0;
  int64_t sa = 0, sb = 0;
  int64_t batch = 1;
  float alpha = 1, beta = 0;
};

/// Callers handle k == 0 (an empty sum), which cuBLAS would not write.
Status RunGemm(const CudaKernelContext& ctx, DataType dtype, const GemmCall& g) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return Status::Ok();
  constexpr int64_t kMaxInt = 2147483647;
  if (g.m > kMaxInt || g.n > kMaxInt || g.k > kMaxInt || g.batch > kMaxInt || g.lda > kMaxInt || g.ldb > kMaxInt) {
    return Unsupported("node " + ctx.node->Describe() + ": matrix dims beyond 2^31 are not supported on the GPU");
  }
  const cudaDataType type = CudaType(dtype);
  const cublasComputeType_t compute =
      dtype == DataType::kFloat && ctx.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  // Column-major view: Y^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = static_cast<int>(g.ldb);
  const int lda = static_cast<int>(g.lda);
  const int k = static_cast<int>(g.k);
  const int m = static_cast<int>(g.m);
  const int n = static_cast<int>(g.n);
  MEMOPT_ASSIGN_OR_RETURN(const CublasApi* api, LoadCublas());  // loaded when ctx.cublas was made
  return Cublas(ctx, *api,
                api->gemm_strided_batched_ex(ctx.cublas, op_b, op_a, n, m, k, &g.alpha, g.b, type, ldb, g.sb, g.a, type,
                                             lda, g.sa, &g.beta, g.y, type, n, g.m * g.n, static_cast<int>(g.batch),
                                             compute, CUBLAS_GEMM_DEFAULT));
}

Status RequireMatmulType(const CudaKernelContext& ctx, int i) {
  if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  if (!IsGpuFloat(ctx.input(i).dtype())) return ctx.UnsupportedType(ctx.input(i).dtype());
  if (ctx.input(i).dtype() != ctx.input(0).dtype()) return ctx.Error("inputs have different types");
  return Status::Ok();
}

/// Y = alpha * op(A) * op(B) with broadcast batches: MatMul, FusedMatMul, TransposeMatMul.
Status MatMulCommon(CudaKernelContext& ctx, bool trans_a, bool trans_b, bool trans_batch_a, bool trans_batch_b,
                    float alpha) {
  MEMOPT_RETURN_IF_ERROR(RequireMatmulType(ctx, 0));
  MEMOPT_RETURN_IF_ERROR(RequireMatmulType(ctx, 1));
  const DeviceTensor& a = ctx.input(0);
  const DeviceTensor& b = ctx.input(1);
  // The CPU kernels' plan (exec/kernels/matmul_plan.h): same shapes, checks and batch offsets.
  auto plan = PlanMatMul(a.shape(), b.shape(), trans_a, trans_b, trans_batch_a, trans_batch_b);
  if (!plan.ok()) return ctx.Error(plan.status().message());
  const MatMulOperand& pa = plan->a;
  const MatMulOperand& pb = plan->b;
  const int64_t m = plan->m, k = plan->k, n = plan->n;
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, a.dtype(), plan->out_shape));
  DeviceTensor& y = ctx.outputs[0];
  if (y.numel() == 0) return Status::Ok();
  if (k == 0) {
    const cudaError_t err = cudaMemsetAsync(y.raw(), 0, static_cast<size_t>(y.bytes()), ctx.stream());
    return err == cudaSuccess ? Status::Ok() : ctx.Error("cudaMemsetAsync failed");
  }
  const int64_t nbatch = static_cast<int64_t>(plan->a_off.size());
  const int64_t esize = ElemByteSize(a.dtype());
  const std::vector<int64_t>& off_a = plan->a_off;
  const std::vector<int64_t>& off_b = plan->b_off;

  GemmCall g;
  g.trans_a = pa.trans, g.trans_b = pb.trans;
  g.m = m, g.n = n, g.k = k;
  g.lda = pa.ld, g.ldb = pb.ld;
  g.alpha = alpha;
  bool b_shared = true, a_stacked = !pa.trans && pa.ld == k;
  for (int64_t i = 0; i < nbatch; ++i) {
    b_shared = b_shared && off_b[i] == 0;
    a_stacked = a_stacked && off_a[i] == i * m * k;
  }
  if (nbatch > 1 && b_shared && a_stacked) {
    // B shared by every batch entry and A's entries stacked row-major: one (batch * m) x k product.
    g.a = a.raw(), g.b = b.raw(), g.y = y.raw(), g.m = nbatch * m;
    return RunGemm(ctx, a.dtype(), g);
  }
  // Runs of output batch entries whose A and B offsets step evenly: one strided call per run
  // (a single run unless the batch dims broadcast on both sides, e.g. [2, 1] against [3]).
  for (int64_t s = 0; s < nbatch;) {
    int64_t e = s + 1;
    const int64_t step_a = e < nbatch ? off_a[e] - off_a[s] : 0;
    const int64_t step_b = e < nbatch ? off_b[e] - off_b[s] : 0;
    while (e < nbatch && off_a[e] == off_a[s] + (e - s) * step_a && off_b[e] == off_b[s] + (e - s) * step_b) ++e;
    g.a = static_cast<const char*>(a.raw()) + off_a[s] * esize;
    g.b = static_cast<const char*>(b.raw()) + off_b[s] * esize;
    g.y = static_cast<char*>(y.raw()) + s * m * n * esize;
    g.sa = step_a, g.sb = step_b, g.batch = e - s;
    MEMOPT_RETURN_IF_ERROR(RunGemm(ctx, a.dtype(), g));
    s = e;
  }
  return Status::Ok();
}

Status MatMul(CudaKernelContext& ctx) { return MatMulCommon(ctx, false, false, false, false, 1.0f); }

Status FusedMatMul(CudaKernelContext& ctx) {
  const Node& n = *ctx.node;
  return MatMulCommon(ctx, n.GetInt("transA", 0) != 0, n.GetInt("transB", 0) != 0, n.GetInt("transBatchA", 0) != 0,
                      n.GetInt("transBatchB", 0) != 0, n.GetFloat("alpha", 1.0f));
}

Status Gemm(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireMatmulType(ctx, 0));
  MEMOPT_RETURN_IF_ERROR(RequireMatmulType(ctx, 1));
  const DeviceTensor& a = ctx.input(0);
  const DeviceTensor& b = ctx.input(1);
  if (a.rank() != 2 || b.rank() != 2) return ctx.Error("Gemm inputs must be 2-D");
  GemmCall g;
  g.trans_a = ctx.node->GetInt("transA", 0) != 0;
  g.trans_b = ctx.node->GetInt("transB", 0) != 0;
  g.alpha = ctx.node->GetFloat("alpha", 1.0f);
  const float beta = ctx.node->GetFloat("beta", 1.0f);
  g.m = g.trans_a ? a.dim(1) : a.dim(0);
  g.k = g.trans_a ? a.dim(0) : a.dim(1);
  g.n = g.trans_b ? b.dim(0) : b.dim(1);
  const int64_t kb = g.trans_b ? b.dim(1) : b.dim(0);
  if (kb != g.k) return ctx.Error("inner dims differ: " + a.Describe() + " x " + b.Describe());
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, a.dtype(), {g.m, g.n}));
  DeviceTensor& y = ctx.outputs[0];
  if (y.numel() == 0) return Status::Ok();
  const bool has_c = ctx.has_input(2) && beta != 0.0f;
  if (has_c) {
    // Y = broadcast(C), then the product accumulates onto it with beta.
    MEMOPT_RETURN_IF_ERROR(RequireMatmulType(ctx, 2));
    const DeviceTensor& c = ctx.input(2);
    auto shape = BroadcastShapes(c.shape(), y.shape());
    if (!shape.ok() || *shape != y.shape()) return ctx.Error("C " + c.Describe() + " does not broadcast to Y");
    auto bc = MakeBroadcast(c.shape(), y.shape(), y.shape());
    if (!bc.ok()) return ctx.Error(bc.status().message());
    const cudaError_t err = LaunchBinary(BinaryOp::kCopyA, *ToElemType(a.dtype()), c.raw(), c.raw(), y.raw(),
                                         y.numel(), &*bc, ctx.stream());
    if (err != cudaSuccess) return ctx.Error(std::string("broadcast of C failed: ") + cudaGetErrorName(err));
    g.beta = beta;
  }
  if (g.k == 0) {  // empty product: Y = beta * C (or zeros)
    if (has_c && beta == 1.0f) return Status::Ok();
    if (!has_c) {
      const cudaError_t err = cudaMemsetAsync(y.raw(), 0, static_cast<size_t>(y.bytes()), ctx.stream());
      return err == cudaSuccess ? Status::Ok() : ctx.Error("cudaMemsetAsync failed");
    }
    return Unsupported("node " + ctx.node->Describe() + ": Gemm with K = 0 and beta != 1 is not supported on the GPU");
  }
  g.a = a.raw(), g.b = b.raw(), g.y = y.raw();
  g.lda = g.trans_a ? g.m : g.k;
  g.ldb = g.trans_b ? g.k : g.n;
  return RunGemm(ctx, a.dtype(), g);
}

}  // namespace

MEMOPT_CUDA_OPS(matmul, matmul) {
  r.Register("", "MatMul", MatMul);
  r.Register("", "Gemm", Gemm);
  r.Register("com.microsoft", "FusedMatMul", FusedMatMul);
  r.Register("com.microsoft", "TransposeMatMul", FusedMatMul);
}

}  // namespace memopt::cuda
