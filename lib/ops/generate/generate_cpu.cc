// Ops that make tensors from attributes or small inputs: Constant (every value_* attribute and
// sparse_value), ConstantOfShape, Range, EyeLike, and Trilu (a masked copy).
#include <algorithm>
#include <cmath>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "exec/tensor_io.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

const onnx::AttributeProto* FindAttribute(const Node& node, const std::string& name) {
  for (const auto& a : node.proto.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

// Densifies a SparseTensorProto (indices either [nnz] linear or [nnz, rank] coordinates).
Expected<Tensor> DenseFromSparse(const KernelContext& ctx, const onnx::SparseTensorProto& sparse) {
  MEMOPT_ASSIGN_OR_RETURN(Tensor values, TensorFromProto(sparse.values()));
  MEMOPT_ASSIGN_OR_RETURN(Tensor indices, TensorFromProto(sparse.indices()));
  std::vector<int64_t> dims(sparse.dims().begin(), sparse.dims().end());
  Tensor out = NewTensor(values.dtype(), dims);
  const std::vector<int64_t> idx = indices.ToInt64Vector();
  const int64_t nnz = values.numel();
  const int64_t r = static_cast<int64_t>(dims.size());
  const std::vector<int64_t> strides = Strides(dims);
  const bool linear = indices.rank() == 1;
  if (static_cast<int64_t>(idx.size()) != (linear ? nnz : nnz * r)) {
    return ctx.Error("sparse_value indices " + indices.Describe() + " do not match values " + values.Describe());
  }
  for (int64_t i = 0; i < nnz; ++i) {
    int64_t off = 0;
    if (linear) {
      off = idx[i];
    } else {
      for (int64_t d = 0; d < r; ++d) off += idx[i * r + d] * strides[d];
    }
    if (off < 0 || off >= out.numel()) return ctx.Error("sparse_value index out of range");
    CopyElements(values, i, out, off, 1);
  }
  return out;
}

Status ConstantKernel(KernelContext& ctx) {
  const Node& node = *ctx.node;
  if (const onnx::TensorProto* t = node.GetTensor("value")) {
    auto tensor = TensorFromProto(*t);
    if (!tensor.ok()) return ctx.Error(tensor.status().message());
    ctx.outputs[0] = std::move(tensor).value();
    return Status::Ok();
  }
  if (const auto* a = FindAttribute(node, "sparse_value"); a && a->has_sparse_tensor()) {
    MEMOPT_ASSIGN_OR_RETURN(ctx.outputs[0], DenseFromSparse(ctx, a->sparse_tensor()));
    return Status::Ok();
  }
  if (const auto* a = FindAttribute(node, "value_float")) {
    Tensor out(DataType::kFloat, {});
    out.data<float>()[0] = a->f();
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  }
  if (const auto* a = FindAttribute(node, "value_floats")) {
    Tensor out(DataType::kFloat, {a->floats_size()});
    std::copy(a->floats().begin(), a->floats().end(), out.data<float>());
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  }
  if (const auto* a = FindAttribute(node, "value_int")) {
    Tensor out(DataType::kInt64, {});
    out.data<int64_t>()[0] = a->i();
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  }
  if (const auto* a = FindAttribute(node, "value_ints")) {
    Tensor out(DataType::kInt64, {a->ints_size()});
    std::copy(a->ints().begin(), a->ints().end(), out.data<int64_t>());
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  }
  if (const auto* a = FindAttribute(node, "value_string")) {
    Tensor out = NewTensor(DataType::kString, {});
    out.strings()[0] = a->s();
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  }
  if (const auto* a = FindAttribute(node, "value_strings")) {
    Tensor out = NewTensor(DataType::kString, {a->strings_size()});
    for (int i = 0; i < a->strings_size(); ++i) out.strings()[i] = a->strings(i);
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  }
  return ctx.Error("has none of the attributes value, sparse_value, value_float(s), value_int(s), value_string(s)");
}

Status ConstantOfShapeKernel(KernelContext& ctx) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIntInput(ctx, 0, "shape"));
  for (int64_t d : shape) {
    if (d < 0) return ctx.Error("shape " + ListToString(shape) + " has a negative dim");
  }
  Tensor value(DataType::kFloat, {1});
  if (const onnx::TensorProto* t = ctx.node->GetTensor("value")) {
    auto v = TensorFromProto(*t);
    if (!v.ok()) return ctx.Error(v.status().message());
    value = std::move(v).value();
    if (value.numel() != 1) return ctx.Error("the 'value' attribute must hold one element, got " + value.Describe());
  }
  Tensor out = NewTensor(value.dtype(), shape);
  FillWithElement(out, value, 0);
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status RangeKernel(KernelContext& ctx) {
  const Tensor& start_t = ctx.input(0);
  const Tensor& limit_t = ctx.input(1);
  const Tensor& delta_t = ctx.input(2);
  for (const Tensor* t : {&start_t, &limit_t, &delta_t}) {
    if (t->numel() != 1 || t->dtype() != start_t.dtype()) {
      return ctx.Error("start, limit and delta must be scalars of one type, got " + start_t.Describe() + ", " +
                       limit_t.Describe() + ", " + delta_t.Describe());
    }
  }
  return DispatchNumeric(start_t.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C start = Load(start_t.data<T>()[0]);
    const C limit = Load(limit_t.data<T>()[0]);
    const C delta = Load(delta_t.data<T>()[0]);
    if (delta == C(0)) return ctx.Error("delta must not be 0");
    int64_t n = 0;
    if constexpr (std::is_floating_point_v<C>) {
      n = static_cast<int64_t>(std::max<C>(C(0), std::ceil((limit - start) / delta)));
    } else {
      const int64_t s = static_cast<int64_t>(start), l = static_cast<int64_t>(limit), d = static_cast<int64_t>(delta);
      if (d > 0 && l > s) n = (l - s + d - 1) / d;
      if (d < 0 && s > l) n = (s - l - d - 1) / (-d);
    }
    Tensor out(start_t.dtype(), {n});
    T* o = out.data<T>();
    for (int64_t i = 0; i < n; ++i) o[i] = StoreAs<T>(start + static_cast<C>(i) * delta);
    ctx.outputs[0] = std::move(out);
    return Status::Ok();
  });
}

Status EyeLikeKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) return ctx.Error("input must be 2-D, got " + x.Describe());
  DataType dtype = x.dtype();
  if (ctx.node->HasAttr("dtype")) {
    const int64_t raw = ctx.node->GetInt("dtype", 0);
    if (!IsKnownDataType(static_cast<int32_t>(raw))) return ctx.Error("unknown dtype " + std::to_string(raw));
    dtype = static_cast<DataType>(raw);
  }
  if (dtype == DataType::kString) return ctx.Error("dtype string is not allowed");
  const int64_t k = ctx.node->GetInt("k", 0);
  const int64_t rows = x.dim(0), cols = x.dim(1);
  Tensor out(dtype, {rows, cols});
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < cols) out.SetFromDouble(i * cols + j, 1.0);
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

Status TriluKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.Error("input must have rank >= 2, got " + x.Describe());
  int64_t k = 0;
  if (ctx.has_input(1)) {
    MEMOPT_ASSIGN_OR_RETURN(k, ReadIntScalar(ctx, 1, "k"));
  }
  const bool upper = ctx.node->GetInt("upper", 1) != 0;
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const int64_t mats = rows * cols > 0 ? x.numel() / (rows * cols) : 0;
  Tensor out = NewTensor(x.dtype(), x.shape());
  CopyElements(x, 0, out, 0, x.numel());
  for (int64_t m = 0; m < mats; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t row = (m * rows + i) * cols;
      // Keep j - i >= k (upper) or j - i <= k (lower).
      if (upper) {
        ZeroElements(out, row, std::clamp<int64_t>(i + k, 0, cols));
      } else {
        const int64_t from = std::clamp<int64_t>(i + k + 1, 0, cols);
        ZeroElements(out, row + from, cols - from);
      }
    }
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

}  // namespace

static void RegisterGenerateKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Constant", ConstantKernel);
  r.SetCpuKernel("", "ConstantOfShape", ConstantOfShapeKernel);
  r.SetCpuKernel(
      "", "Range", RangeKernel,
      {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16, DataType::kInt16, DataType::kInt32,
       DataType::kInt64, DataType::kInt8, DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64});
  r.SetCpuKernel("", "EyeLike", EyeLikeKernel);
  r.SetCpuKernel("", "Trilu", TriluKernel);
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(generate, generate_cpu) {
  memopt::tensor_kernels::RegisterGenerateKernels(ops);
}
