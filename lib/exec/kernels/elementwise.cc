// RegisterElementwiseKernels and the helpers shared by the elementwise_*.cc files.

// The build uses -O2, whose "very cheap" vectorizer cost model skips loops with a runtime trip
// count; the elementwise loops here are meant to be vectorized, so use the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "exec/kernels/elementwise.h"

#include <string>

namespace memopt {

namespace elementwise {

std::vector<DataType> FloatTypes() {
  return {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16};
}

std::vector<DataType> IntTypes() {
  return {DataType::kInt8,   DataType::kUint8,  DataType::kInt16, DataType::kUint16,
          DataType::kInt32,  DataType::kUint32, DataType::kInt64, DataType::kUint64};
}

std::vector<DataType> NumericTypes() {
  std::vector<DataType> t = FloatTypes();
  const std::vector<DataType> ints = IntTypes();
  t.insert(t.end(), ints.begin(), ints.end());
  return t;
}

std::vector<DataType> NumericAndBoolTypes() {
  std::vector<DataType> t = NumericTypes();
  t.push_back(DataType::kBool);
  return t;
}

std::vector<DataType> AllTypes() {
  std::vector<DataType> t = NumericAndBoolTypes();
  t.push_back(DataType::kString);
  return t;
}

Status RequireInputs(const KernelContext& ctx, int n) {
  for (int i = 0; i < n; ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
  }
  if (ctx.outputs.empty()) return ctx.Error("the node has no outputs");
  return Status::Ok();
}

Expected<std::vector<int64_t>> BroadcastInputs(const KernelContext& ctx, int n) {
  MEMOPT_RETURN_IF_ERROR(RequireInputs(ctx, n));
  std::vector<std::vector<int64_t>> shapes;
  shapes.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) shapes.push_back(ctx.input(i).shape());
  auto out = BroadcastShapes(shapes);
  if (!out) {
    std::string list;
    for (const auto& s : shapes) list += (list.empty() ? "" : ", ") + ShapeToString(s);
    return ctx.Error("input shapes " + list + " cannot be broadcast together");
  }
  return *out;
}

}  // namespace elementwise


}  // namespace memopt
