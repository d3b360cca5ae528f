// Einsum with a general equation: explicit or implicit output, ellipsis (broadcast), repeated
// indices within one operand (diagonals) and any number of operands. Every label becomes one loop
// dimension; out[output labels] += prod_k in_k[labels of k], accumulated in double (floats) or
// int64 (integers).
#include <algorithm>
#include <map>

#include "exec/kernels/kernel_util.h"
#include "exec/kernels/tensor_common.h"
#include "ir/op_registry.h"

namespace memopt::tensor_kernels {
namespace {

constexpr int kEllipsisBase = 52;  // label ids: 0-25 'a'-'z', 26-51 'A'-'Z', 52+ ellipsis dims

int LabelId(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// One operand's subscripts: letter ids, with kEllipsisMark standing for "...".
constexpr int kEllipsisMark = -2;

Expected<std::vector<int>> ParseTerm(const KernelContext& ctx, const std::string& term) {
  std::vector<int> out;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (term.compare(i, 3, "...") != 0 || seen_ellipsis) {
        return ctx.Error("malformed subscripts '" + term + "' in equation '" + ctx.node->GetString("equation", "") +
                         "'");
      }
      seen_ellipsis = true;
      out.push_back(kEllipsisMark);
      i += 2;
      continue;
    }
    const int id = LabelId(term[i]);
    if (id < 0) return ctx.Error("invalid character '" + std::string(1, term[i]) + "' in equation");
    out.push_back(id);
  }
  return out;
}

struct Plan {
  std::vector<int64_t> loop_shape;            // output labels first, then reduced labels
  std::vector<std::vector<int64_t>> strides;  // per input, then the output (0 on reduced dims)
  std::vector<int64_t> out_shape;
};

Expected<Plan> MakePlan(const KernelContext& ctx) {
  std::string eq;
  for (char c : ctx.node->GetString("equation", "")) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t pos = 0;
  while (true) {
    const size_t comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (static_cast<int>(terms.size()) != ctx.num_inputs()) {
    return ctx.Error("equation '" + eq + "' has " + std::to_string(terms.size()) + " operands but the node has " +
                     std::to_string(ctx.num_inputs()) + " inputs");
  }
  // Expand each operand's subscripts to one label id per dim.
  std::vector<std::vector<int>> labels(terms.size());
  int64_t ellipsis_rank = 0;
  std::vector<std::vector<int>> parsed(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    MEMOPT_ASSIGN_OR_RETURN(parsed[k], ParseTerm(ctx, terms[k]));
    const int64_t letters = std::count_if(parsed[k].begin(), parsed[k].end(), [](int id) { return id >= 0; });
    const int64_t rank = ctx.input(static_cast<int>(k)).rank();
    const bool has_ellipsis = letters != static_cast<int64_t>(parsed[k].size());
    if (rank < letters || (!has_ellipsis && rank != letters)) {
      return ctx.Error("operand " + std::to_string(k) + " " + ctx.input(static_cast<int>(k)).Describe() +
                       " does not match subscripts '" + terms[k] + "'");
    }
    if (has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
  }
  std::map<int, int64_t> size;
  std::vector<int> count(static_cast<size_t>(kEllipsisBase + ellipsis_rank), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    const Tensor& t = ctx.input(static_cast<int>(k));
    const int64_t letters = std::count_if(parsed[k].begin(), parsed[k].end(), [](int id) { return id >= 0; });
    const int64_t e = t.rank() - letters;
    for (int id : parsed[k]) {
      if (id == kEllipsisMark) {
        for (int64_t j = 0; j < e; ++j) labels[k].push_back(static_cast<int>(kEllipsisBase + ellipsis_rank - e + j));
      } else {
        labels[k].push_back(id);
      }
    }
    for (int64_t d = 0; d < t.rank(); ++d) {
      const int id = labels[k][d];
      ++count[id];
      auto it = size.find(id);
      if (it == size.end() || it->second == 1) {
        size[id] = t.dim(d);
      } else if (t.dim(d) != it->second && t.dim(d) != 1) {
        return ctx.Error("label sizes disagree in equation '" + eq + "' (operand " + std::to_string(k) + " " +
                         t.Describe() + ")");
      }
    }
  }
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    MEMOPT_ASSIGN_OR_RETURN(std::vector<int> out_term, ParseTerm(ctx, eq.substr(arrow + 2)));
    for (int id : out_term) {
      if (id == kEllipsisMark) {
        for (int64_t j = 0; j < ellipsis_rank; ++j) out_labels.push_back(static_cast<int>(kEllipsisBase + j));
      } else {
        if (!size.count(id)) return ctx.Error("output label not found among the inputs of '" + eq + "'");
        out_labels.push_back(id);
      }
    }
  } else {
    for (int64_t j = 0; j < ellipsis_rank; ++j) out_labels.push_back(static_cast<int>(kEllipsisBase + j));
    // Letters used once, in ASCII order (upper case first).
    std::vector<std::pair<char, int>> once;
    for (const auto& [id, n] : size) {
      if (id < kEllipsisBase && count[id] == 1) once.push_back({id < 26 ? char('a' + id) : char('A' + id - 26), id});
    }
    std::sort(once.begin(), once.end());
    for (const auto& o : once) out_labels.push_back(o.second);
  }
  Plan plan;
  std::vector<int> loop_labels = out_labels;
  for (const auto& [id, n] : size) {
    if (std::find(out_labels.begin(), out_labels.end(), id) == out_labels.end()) loop_labels.push_back(id);
  }
  for (int id : loop_labels) plan.loop_shape.push_back(size[id]);
  for (int id : out_labels) plan.out_shape.push_back(size[id]);
  for (size_t k = 0; k < terms.size(); ++k) {
    const Tensor& t = ctx.input(static_cast<int>(k));
    const std::vector<int64_t> st = Strides(t.shape());
    std::vector<int64_t> s(loop_labels.size(), 0);
    for (int64_t d = 0; d < t.rank(); ++d) {
      if (t.dim(d) == 1) continue;  // broadcast (or size 1: no movement)
      const size_t l = std::find(loop_labels.begin(), loop_labels.end(), labels[k][d]) - loop_labels.begin();
      s[l] += st[d];
    }
    plan.strides.push_back(std::move(s));
  }
  const std::vector<int64_t> ost = Strides(plan.out_shape);
  std::vector<int64_t> s(loop_labels.size(), 0);
  for (size_t i = 0; i < out_labels.size(); ++i) s[i] = ost[i];
  plan.strides.push_back(std::move(s));
  return plan;
}

Status EinsumKernel(KernelContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("needs at least one input");
  const DataType dtype = ctx.input(0).dtype();
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    if (!ctx.has_input(k) || ctx.input(k).dtype() != dtype)
      return ctx.Error("all inputs must be present and of one type");
  }
  MEMOPT_ASSIGN_OR_RETURN(Plan plan, MakePlan(ctx));
  Tensor out(dtype, plan.out_shape);
  const int n = ctx.num_inputs();
  MEMOPT_RETURN_IF_ERROR(DispatchNumeric(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_integral_v<ComputeType<T>>, int64_t, double>;
    std::vector<std::vector<Acc>> ins(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
      const Tensor& t = ctx.input(k);
      const T* p = t.data<T>();
      ins[k].resize(static_cast<size_t>(t.numel()));
      for (int64_t i = 0; i < t.numel(); ++i) ins[k][i] = static_cast<Acc>(Load(p[i]));
    }
    std::vector<Acc> acc(static_cast<size_t>(out.numel()), Acc(0));
    ForEachIndexed(plan.loop_shape, plan.strides, [&](int64_t, const int64_t* off) {
      Acc v = ins[0][off[0]];
      for (int k = 1; k < n; ++k) v *= ins[k][off[k]];
      acc[off[n]] += v;
    });
    T* o = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = StoreAs<T>(acc[i]);
  }));
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

}  // namespace

static void RegisterEinsumKernels(OpRegistry& r) {
  r.SetCpuKernel("", "Einsum", EinsumKernel,
             {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16, DataType::kInt32,
              DataType::kInt64, DataType::kUint32, DataType::kUint64});
}

}  // namespace memopt::tensor_kernels

MEMOPT_OPS(matmul, einsum_cpu) {
  memopt::tensor_kernels::RegisterEinsumKernels(ops);
}
