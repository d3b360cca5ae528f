// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare (axes as attribute or,
// from opset 13/18, as an optional input; keepdims; noop_with_empty_axes), com.microsoft
// ReduceSumTraining, and ArgMax/ArgMin (select_last_index).
//
// The input is walked once in memory order: adjacent dims with the same reduced/kept status are
// merged into groups, and every row of the innermost group is folded into an accumulator array
// with one entry per output element (a vector update when the innermost group is kept, a scalar
// fold when it is reduced). Sums and products of float types accumulate in double, of integer
// types in 64 bits; Max/Min compare in the compute type and propagate NaN like numpy.

// The build uses -O2, whose "very cheap" vectorizer cost model skips loops with a runtime trip
// count; the elementwise loops here are meant to be vectorized, so use the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/kernel_util.h"
#include "ir/op_registry.h"

namespace memopt {

namespace {

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

/// The input seen as merged groups of dims (outer to inner), each either reduced or kept.
struct ReduceLayout {
  std::vector<int64_t> out_shape;
  std::vector<int64_t> sizes;      // group sizes (at least one group)
  std::vector<int64_t> in_stride;  // input stride of each group (input is contiguous)
  std::vector<int64_t> out_stride; // accumulator stride (0 for reduced groups)
  std::vector<bool> reduced;
  int64_t out_numel = 1;
  int64_t count = 1;  // input elements folded into each output element
};

ReduceLayout MakeLayout(const std::vector<int64_t>& shape, const std::vector<bool>& reduce, bool keepdims) {
  ReduceLayout l;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduce[d]) {
      l.count *= shape[d];
      if (keepdims) l.out_shape.push_back(1);
    } else {
      l.out_numel *= shape[d];
      l.out_shape.push_back(shape[d]);
    }
    if (shape[d] == 1) continue;  // size-1 dims do not change the walk
    if (!l.sizes.empty() && l.reduced.back() == reduce[d]) {
      l.sizes.back() *= shape[d];
    } else {
      l.sizes.push_back(shape[d]);
      l.reduced.push_back(reduce[d]);
    }
  }
  if (l.sizes.empty()) {
    l.sizes.push_back(1);
    l.reduced.push_back(false);
  }
  const size_t g = l.sizes.size();
  l.in_stride.assign(g, 1);
  l.out_stride.assign(g, 0);
  int64_t in_s = 1;
  int64_t out_s = 1;
  for (size_t i = g; i-- > 0;) {
    l.in_stride[i] = in_s;
    in_s *= l.sizes[i];
    if (!l.reduced[i]) {
      l.out_stride[i] = out_s;
      out_s *= l.sizes[i];
    }
  }
  return l;
}

/// Calls row(in_offset, out_offset, n) for every row of the innermost group, restricted to
/// group-0 indices [g0_begin, g0_end) (when there is more than one group) and inner positions
/// [inner_begin, inner_end).
template <typename Row>
void WalkRows(const ReduceLayout& l, int64_t g0_begin, int64_t g0_end, int64_t inner_begin, int64_t inner_end,
              Row row) {
  const int64_t g = static_cast<int64_t>(l.sizes.size());
  const int64_t inner_out_step = l.reduced[g - 1] ? 0 : 1;
  const int64_t n = inner_end - inner_begin;
  if (n <= 0) return;
  if (g == 1) {
    row(inner_begin, inner_begin * inner_out_step, n);
    return;
  }
  if (g0_begin >= g0_end) return;
  std::vector<int64_t> idx(static_cast<size_t>(g - 1), 0);
  idx[0] = g0_begin;
  int64_t in_off = g0_begin * l.in_stride[0];
  int64_t out_off = g0_begin * l.out_stride[0];
  while (true) {
    row(in_off + inner_begin, out_off + inner_begin * inner_out_step, n);
    int64_t d = g - 2;
    for (; d >= 0; --d) {
      const int64_t start = d == 0 ? g0_begin : 0;
      const int64_t end = d == 0 ? g0_end : l.sizes[d];
      ++idx[d];
      in_off += l.in_stride[d];
      out_off += l.out_stride[d];
      if (idx[d] < end) break;
      in_off -= l.in_stride[d] * (idx[d] - start);
      out_off -= l.out_stride[d] * (idx[d] - start);
      idx[d] = start;
    }
    if (d < 0) return;
  }
}

/// Partial outputs a reduction over outer and inner groups is split into (a constant, so the
/// order of the float sums does not depend on the thread count).
constexpr int64_t kReduceChunks = 8;
/// Column sums take the chunks from this many rows per chunk on (fewer, longer rows split by
/// columns: the partial outputs would be as large as the input).
constexpr int64_t kReduceChunkRows = 16;

/// acc[o] = combine(acc[o], map(x, o)) over all input elements x that reduce into output o.
/// Runs on the pool's threads when the outer group or the innermost group is kept (disjoint
/// outputs), or in fixed chunks with partial outputs when a kept group lies between reduced ones
/// or the columns of many rows are summed.
template <typename T, typename A, typename Map, typename Combine>
void Accumulate(const T* x, const ReduceLayout& l, std::vector<A>& acc, Map map, Combine combine) {
  const int64_t g = static_cast<int64_t>(l.sizes.size());
  const int64_t inner = l.sizes[g - 1];
  const bool inner_reduced = l.reduced[g - 1];
  // Folds one row of the innermost group into the accumulators a.
  const auto fold = [&](A* a, int64_t in_off, int64_t out_off, int64_t n) {
    const T* px = x + in_off;
    if (inner_reduced) {
      // Four independent partial results break the dependency chain (the combine is
      // associative and commutative; float sums are reordered, as any parallel sum would be).
      A v0 = a[out_off];
      int64_t i = 0;
      if (n >= 8) {
        A v1 = map(Load(px[1]), out_off), v2 = map(Load(px[2]), out_off), v3 = map(Load(px[3]), out_off);
        v0 = combine(v0, map(Load(px[0]), out_off));
        for (i = 4; i + 4 <= n; i += 4) {
          v0 = combine(v0, map(Load(px[i]), out_off));
          v1 = combine(v1, map(Load(px[i + 1]), out_off));
          v2 = combine(v2, map(Load(px[i + 2]), out_off));
          v3 = combine(v3, map(Load(px[i + 3]), out_off));
        }
        v0 = combine(combine(v0, v1), combine(v2, v3));
      }
      for (; i < n; ++i) v0 = combine(v0, map(Load(px[i]), out_off));
      a[out_off] = v0;
    } else {
      A* pa = a + out_off;
      for (int64_t i = 0; i < n; ++i) pa[i] = combine(pa[i], map(Load(px[i]), out_off + i));
    }
  };
  const auto row = [&](int64_t in_off, int64_t out_off, int64_t n) { fold(acc.data(), in_off, out_off, n); };
  const int64_t total = NumElements(l.sizes);
  if (total == 0) return;
  if (g > 1 && !l.reduced[0]) {
    ParallelFor(l.sizes[0], total / l.sizes[0], [&](int64_t b, int64_t e) { WalkRows(l, b, e, 0, inner, row); });
  } else if (!inner_reduced && (g > 2 || l.sizes[0] < kReduceChunkRows * kReduceChunks)) {
    ParallelFor(inner, total / inner, [&](int64_t b, int64_t e) { WalkRows(l, 0, l.sizes[0], b, e, row); });
  } else if (g >= 2) {
    // Reduced outer and inner groups around a kept one (BatchNorm's statistics over N, H, W), or
    // column sums over many rows (a bias gradient): fixed chunks of the outer group fold into
    // partial outputs of their own on the pool's threads, then combine in chunk order, so the
    // bits do not depend on the thread count. A chunk reads whole rows; split by columns, each
    // thread read a slice of every row (2 threads ran slower than 1 in the GPT-2 step).
    const int64_t chunks = std::min<int64_t>(l.sizes[0], kReduceChunks);
    std::vector<std::vector<A>> part(static_cast<size_t>(chunks), acc);
    ParallelFor(chunks, total / chunks, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        A* pa = part[static_cast<size_t>(k)].data();
        WalkRows(l, k * l.sizes[0] / chunks, (k + 1) * l.sizes[0] / chunks, 0, inner,
                 [&](int64_t in_off, int64_t out_off, int64_t n) { fold(pa, in_off, out_off, n); });
      }
    });
    for (const std::vector<A>& pa : part) {
      for (size_t o = 0; o < acc.size(); ++o) acc[o] = combine(acc[o], pa[o]);
    }
  } else {
    WalkRows(l, 0, l.sizes[0], 0, inner, row);
  }
}

/// Accumulator type for sums and products: double for floats, 64-bit integers otherwise.
template <typename C>
using SumType = std::conditional_t<std::is_floating_point_v<C>, double,
                                   std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>>;

template <typename C>
C Lowest() {
  if constexpr (std::is_same_v<C, bool>) return false;
  else if constexpr (std::is_floating_point_v<C>) return -std::numeric_limits<C>::infinity();
  else return std::numeric_limits<C>::lowest();
}

template <typename C>
C Highest() {
  if constexpr (std::is_same_v<C, bool>) return true;
  else if constexpr (std::is_floating_point_v<C>) return std::numeric_limits<C>::infinity();
  else return std::numeric_limits<C>::max();
}

template <typename C>
bool IsNan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

template <typename T>
void Reduce(ReduceOp op, const Tensor& x, const ReduceLayout& l, Tensor& y) {
  using C = ComputeType<T>;
  using S = SumType<std::conditional_t<std::is_same_v<C, bool>, uint8_t, C>>;
  const T* in = x.data<T>();
  T* out = y.data<T>();
  const int64_t m = l.out_numel;
  const auto identity = [](auto v, int64_t) { return v; };
  const auto store = [&](auto fin, const auto& acc) {
    for (int64_t o = 0; o < m; ++o) out[o] = StoreAs<T>(fin(acc[o]));
  };
  if (op == ReduceOp::kMax || op == ReduceOp::kMin || op == ReduceOp::kLogSumExp) {
    const bool is_min = op == ReduceOp::kMin;
    using B = std::conditional_t<std::is_same_v<C, bool>, uint8_t, C>;  // no std::vector<bool>
    std::vector<B> best(static_cast<size_t>(m), static_cast<B>(is_min ? Highest<C>() : Lowest<C>()));
    if (is_min) {
      Accumulate(in, l, best, identity, [](B a, B v) { return (v < a || IsNan(v)) ? v : a; });
    } else {
      Accumulate(in, l, best, identity, [](B a, B v) { return (v > a || IsNan(v)) ? v : a; });
    }
    if (op != ReduceOp::kLogSumExp) return store([](B v) { return v; }, best);
    if constexpr (std::is_floating_point_v<C>) {
      // log(sum(exp(x - max))) + max; an infinite or NaN max is the answer itself.
      std::vector<double> sum(static_cast<size_t>(m), 0.0);
      const B* mx = best.data();
      Accumulate(in, l, sum, [mx](C v, int64_t o) { return std::exp(static_cast<double>(v) - mx[o]); },
                 [](double a, double v) { return a + v; });
      for (int64_t o = 0; o < m; ++o) {
        const double b = mx[o];
        out[o] = StoreAs<T>(std::isfinite(b) ? std::log(sum[o]) + b : b);
      }
    } else {
      std::vector<double> sum(static_cast<size_t>(m), 0.0);
      Accumulate(in, l, sum, [](C v, int64_t) { return std::exp(static_cast<double>(v)); },
                 [](double a, double v) { return a + v; });
      store([](double v) { return std::log(v); }, sum);
    }
    return;
  }
  const auto add = [](S a, S v) { return static_cast<S>(a + v); };
  std::vector<S> acc(static_cast<size_t>(m), op == ReduceOp::kProd ? S(1) : S(0));
  switch (op) {
    case ReduceOp::kProd:
      Accumulate(in, l, acc, [](C v, int64_t) { return static_cast<S>(v); }, [](S a, S v) { return a * v; });
      break;
    case ReduceOp::kL1:
      Accumulate(in, l, acc, [](C v, int64_t) {
        const S s = static_cast<S>(v);
        if constexpr (std::is_signed_v<S>) return s < S(0) ? S(-s) : s;
        else return s;
      }, add);
      break;
    case ReduceOp::kL2:
    case ReduceOp::kSumSquare:
      Accumulate(in, l, acc, [](C v, int64_t) { return static_cast<S>(static_cast<S>(v) * static_cast<S>(v)); }, add);
      break;
    default:
      Accumulate(in, l, acc, [](C v, int64_t) { return static_cast<S>(v); }, add);
  }
  const int64_t count = l.count;
  switch (op) {
    case ReduceOp::kMean:
      if constexpr (std::is_floating_point_v<S>) {
        store([count](S v) { return v / static_cast<S>(count); }, acc);
      } else {
        store([count](S v) { return count == 0 ? S(0) : static_cast<S>(v / static_cast<S>(count)); }, acc);
      }
      break;
    case ReduceOp::kL2: store([](S v) { return std::sqrt(static_cast<double>(v)); }, acc); break;
    case ReduceOp::kLogSum: store([](S v) { return std::log(static_cast<double>(v)); }, acc); break;
    default: store([](S v) { return v; }, acc);
  }
}

/// Which axes to reduce: the `axes` input (when present and non-empty) or attribute; none given
/// means all axes, unless noop_with_empty_axes.
Expected<std::vector<bool>> ReducedAxes(const KernelContext& ctx, int64_t rank) {
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    const Tensor& a = ctx.input(1);
    if (a.dtype() != DataType::kInt64 && a.dtype() != DataType::kInt32) {
      return ctx.Error("axes must be int64, got " + a.Describe());
    }
    axes = a.ToInt64Vector();
  } else {
    axes = ctx.node->GetInts("axes");
  }
  if (axes.empty()) {
    const bool noop = ctx.node->GetInt("noop_with_empty_axes", 0) != 0;
    return std::vector<bool>(static_cast<size_t>(rank), !noop);
  }
  auto norm = NormalizeAxes(axes, rank);
  if (!norm) {
    std::string list;
    for (int64_t a : axes) list += (list.empty() ? "" : ", ") + std::to_string(a);
    return ctx.Error("axes [" + list + "] are out of range or repeated for rank " + std::to_string(rank));
  }
  std::vector<bool> reduce(static_cast<size_t>(rank), false);
  for (int64_t a : *norm) reduce[a] = true;
  return reduce;
}

template <ReduceOp kOp>
Status ReduceKernel(KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("input 0 is missing");
  const Tensor& x = ctx.input(0);
  MEMOPT_ASSIGN_OR_RETURN(std::vector<bool> reduce, ReducedAxes(ctx, x.rank()));
  const bool keepdims = ctx.node->GetInt("keepdims", 1) != 0;
  const ReduceLayout l = MakeLayout(x.shape(), reduce, keepdims);
  ctx.outputs[0] = Tensor(x.dtype(), l.out_shape);
  Tensor& y = ctx.outputs[0];
  if (x.dtype() == DataType::kBool) {
    if (kOp != ReduceOp::kMax && kOp != ReduceOp::kMin) return UnsupportedType(x.dtype(), ctx.node->op_type);
    Reduce<bool>(kOp, x, l, y);
    return Status::Ok();
  }
  return DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Reduce<T>(kOp, x, l, y);
  });
}

// ---------------------------------------------------------------------------------------------
// ArgMax / ArgMin.

template <bool kMax>
Status ArgKernel(KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("input 0 is missing");
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  auto axis = NormalizeAxis(ctx.node->GetInt("axis", 0), std::max<int64_t>(rank, 1));
  if (!axis) return ctx.Error("axis " + std::to_string(ctx.node->GetInt("axis", 0)) + " is out of range");
  const bool keepdims = ctx.node->GetInt("keepdims", 1) != 0;
  const bool last = ctx.node->GetInt("select_last_index", 0) != 0;
  const int64_t outer = ProductOf(x.shape(), 0, *axis);
  const int64_t n = rank == 0 ? 1 : x.dim(*axis);
  const int64_t inner = ProductOf(x.shape(), *axis + 1, rank);
  if (n == 0) return ctx.Error("cannot take Arg" + std::string(kMax ? "Max" : "Min") + " over an empty axis");
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != *axis) out_shape.push_back(x.dim(d));
    else if (keepdims) out_shape.push_back(1);
  }
  ctx.outputs[0] = Tensor(DataType::kInt64, out_shape);
  int64_t* out = ctx.outputs[0].data<int64_t>();
  return DispatchNumeric(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* in = x.data<T>();
    // a replaces the best b when it is strictly better, or equal with select_last_index; the
    // first NaN wins (numpy).
    const auto better = [last](C a, C b) {
      if (IsNan(b)) return false;
      if (IsNan(a)) return true;
      return kMax ? (a > b || (last && a == b)) : (a < b || (last && a == b));
    };
    ParallelFor(outer, n * inner, [&](int64_t ob, int64_t oe) {
      std::vector<C> best(static_cast<size_t>(inner));
      for (int64_t o = ob; o < oe; ++o) {
        const T* base = in + o * n * inner;
        int64_t* idx = out + o * inner;
        for (int64_t i = 0; i < inner; ++i) {
          best[i] = Load(base[i]);
          idx[i] = 0;
        }
        for (int64_t j = 1; j < n; ++j) {
          const T* rowp = base + j * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const C v = Load(rowp[i]);
            if (better(v, best[i])) {
              best[i] = v;
              idx[i] = j;
            }
          }
        }
      }
    });
  });
}

std::vector<DataType> ReduceTypes(bool with_bool) {
  std::vector<DataType> t = {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16,
                             DataType::kInt8,  DataType::kUint8,  DataType::kInt16,   DataType::kUint16,
                             DataType::kInt32, DataType::kUint32, DataType::kInt64,   DataType::kUint64};
  if (with_bool) t.push_back(DataType::kBool);
  return t;
}

}  // namespace

static void RegisterReduceKernels(OpRegistry& r) {
  const auto t = ReduceTypes(false);
  r.SetCpuKernel("", "ReduceSum", ReduceKernel<ReduceOp::kSum>, t);
  r.SetCpuKernel("com.microsoft", "ReduceSumTraining", ReduceKernel<ReduceOp::kSum>, t);
  r.SetCpuKernel("", "ReduceMean", ReduceKernel<ReduceOp::kMean>, t);
  r.SetCpuKernel("", "ReduceMax", ReduceKernel<ReduceOp::kMax>, ReduceTypes(true));
  r.SetCpuKernel("", "ReduceMin", ReduceKernel<ReduceOp::kMin>, ReduceTypes(true));
  r.SetCpuKernel("", "ReduceProd", ReduceKernel<ReduceOp::kProd>, t);
  r.SetCpuKernel("", "ReduceL1", ReduceKernel<ReduceOp::kL1>, t);
  r.SetCpuKernel("", "ReduceL2", ReduceKernel<ReduceOp::kL2>, t);
  r.SetCpuKernel("", "ReduceLogSum", ReduceKernel<ReduceOp::kLogSum>, t);
  r.SetCpuKernel("", "ReduceLogSumExp", ReduceKernel<ReduceOp::kLogSumExp>, t);
  r.SetCpuKernel("", "ReduceSumSquare", ReduceKernel<ReduceOp::kSumSquare>, t);
  r.SetCpuKernel("", "ArgMax", ArgKernel<true>, t);
  r.SetCpuKernel("", "ArgMin", ArgKernel<false>, t);
}

}  // namespace memopt

MEMOPT_OPS(reduce, reduce_cpu) {
  memopt::RegisterReduceKernels(ops);
}
