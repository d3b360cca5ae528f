// Node-level wrappers of the elementwise CUDA kernels: Add/Sub/Mul/Div (broadcasting) and Cast.
// They check inputs the way the CPU kernels do, allocate the output from the pool and launch
// (launch.h). The broadcast description (BroadcastShapes, MakeBroadcast) is shared with the other
// families (kernel_util.h).
#include <algorithm>
#include <string>

#include "cuda_kernel.h"
#include "elem_type.h"
#include "kernel_util.h"
#include "exec/tensor.h"

namespace memopt::cuda {

Expected<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (da != db && da != 1 && db != 1) {
      auto text = [](const std::vector<int64_t>& s) {
        std::string t = "[";
        for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
        return t + "]";
      };
      return InvalidInput("shapes " + text(a) + " and " + text(b) + " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Expected<BroadcastShape> MakeBroadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                       const std::vector<int64_t>& out) {
  const size_t rank = out.size();
  const std::vector<int64_t> sa = Strides(a), sb = Strides(b);
  BroadcastShape bc;
  for (size_t i = 0; i < rank; ++i) {
    if (out[i] == 1) continue;
    if (bc.rank == kMaxRank) return Unsupported("more than 8 broadcast dims of size > 1");
    const size_t ia = i + a.size() - rank, ib = i + b.size() - rank;  // wraps when absent
    const bool has_a = i + a.size() >= rank, has_b = i + b.size() >= rank;
    bc.out_dims[bc.rank] = out[i];
    bc.a_strides[bc.rank] = has_a && a[ia] != 1 ? sa[ia] : 0;
    bc.b_strides[bc.rank] = has_b && b[ib] != 1 ? sb[ib] : 0;
    ++bc.rank;
  }
  return bc;
}

namespace {

template <BinaryOp kOp>
Status BinaryKernel(CudaKernelContext& ctx) {
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 0, "A"));
  MEMOPT_RETURN_IF_ERROR(RequireFloat(ctx, 1, "B"));
  const DeviceTensor& a = ctx.input(0);
  const DeviceTensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    return ctx.Error("inputs have different types (" + a.Describe() + ", " + b.Describe() + ")");
  }
  auto out_shape = BroadcastShapes(a.shape(), b.shape());
  if (!out_shape.ok()) return ctx.Error(out_shape.status().message());
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, a.dtype(), *out_shape));
  DeviceTensor& y = ctx.outputs[0];
  const ElemType t = *ToElemType(a.dtype());
  if (a.shape() == b.shape()) {
    return Launched(ctx, LaunchBinary(kOp, t, a.raw(), b.raw(), y.raw(), y.numel(), nullptr, ctx.stream()));
  }
  auto bc = MakeBroadcast(a.shape(), b.shape(), y.shape());
  if (!bc.ok()) return ctx.Error(bc.status().message());
  return Launched(ctx, LaunchBinary(kOp, t, a.raw(), b.raw(), y.raw(), y.numel(), &*bc, ctx.stream()));
}

Status Cast(CudaKernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("input is missing");
  const DeviceTensor& x = ctx.input(0);
  const auto to = static_cast<DataType>(ctx.node->GetInt("to", 0));
  const auto from_t = ToElemType(x.dtype());
  if (!from_t) return ctx.UnsupportedType(x.dtype());
  const auto to_t = ToElemType(to);
  if (!to_t) return ctx.UnsupportedType(to);
  MEMOPT_RETURN_IF_ERROR(ctx.AllocateOutput(0, to, x.shape()));
  return Launched(ctx, LaunchCast(*from_t, *to_t, x.raw(), ctx.outputs[0].raw(), x.numel(), ctx.stream()));
}

}  // namespace

MEMOPT_CUDA_OPS(elementwise, elementwise) {
  r.Register("", "Add", BinaryKernel<BinaryOp::kAdd>);
  r.Register("", "Sub", BinaryKernel<BinaryOp::kSub>);
  r.Register("", "Mul", BinaryKernel<BinaryOp::kMul>);
  r.Register("", "Div", BinaryKernel<BinaryOp::kDiv>);
  r.Register("", "Cast", Cast);
}

}  // namespace memopt::cuda
