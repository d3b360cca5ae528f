#include "exec/kernels/tensor_common.h"

#include <algorithm>
#include <cstring>

#include "exec/kernels/decode_inputs.h"
#include "exec/kernels/kernel_util.h"
#include "exec/kernels/transpose_block.h"

namespace memopt {


namespace tensor_kernels {

Tensor NewTensor(DataType dtype, std::vector<int64_t> shape) {
  Tensor t(dtype, std::move(shape));
  if (dtype == DataType::kString && static_cast<int64_t>(t.strings().size()) != t.numel()) {
    t.strings().assign(static_cast<size_t>(t.numel()), std::string());
  }
  return t;
}

Tensor ReshapeView(const Tensor& t, std::vector<int64_t> shape) {
  Tensor out = t.Reshaped(std::move(shape));
  if (t.dtype() == DataType::kString && out.strings().size() != t.strings().size()) out.strings() = t.strings();
  return out;
}

IntListReader HostInts(const KernelContext& ctx) {
  return [&ctx](int i) { return ctx.input(i).ToInt64Vector(); };
}

Expected<std::vector<int64_t>> ReadIntInput(const KernelContext& ctx, int index, const std::string& what) {
  auto v = ReadIntList(ctx.inputs, HostInts(ctx), index, what);
  if (!v.ok()) return ctx.Error(v.status().message());
  return v;
}

Expected<int64_t> ReadIntScalar(const KernelContext& ctx, int index, const std::string& what) {
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIntInput(ctx, index, what));
  if (v.size() != 1) {
    return ctx.Error("input '" + what + "' must hold one value, got " + ctx.input(index).Describe());
  }
  return v[0];
}

Expected<int64_t> CheckedAxis(const KernelContext& ctx, int64_t axis, int64_t rank, const std::string& what) {
  auto a = ResolveAxis(axis, rank, what);
  if (!a.ok()) return ctx.Error(a.status().message());
  return a;
}

std::string ListToString(const std::vector<int64_t>& v) { return ShapeToString(v); }

void CopyElements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) dst.strings()[dst_off + i] = src.strings()[src_off + i];
    return;
  }
  const int64_t es = ElemByteSize(src.dtype());
  std::memcpy(static_cast<std::byte*>(dst.raw()) + dst_off * es,
              static_cast<const std::byte*>(src.raw()) + src_off * es, static_cast<size_t>(n * es));
}

void ZeroElements(Tensor& dst, int64_t dst_off, int64_t n) {
  if (n <= 0) return;
  if (dst.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) dst.strings()[dst_off + i].clear();
    return;
  }
  const int64_t es = ElemByteSize(dst.dtype());
  std::memset(static_cast<std::byte*>(dst.raw()) + dst_off * es, 0, static_cast<size_t>(n * es));
}

void FillWithElement(Tensor& dst, const Tensor& value, int64_t index) {
  const int64_t n = dst.numel();
  if (n == 0) return;
  if (dst.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) dst.strings()[i] = value.strings()[index];
    return;
  }
  const int64_t es = ElemByteSize(dst.dtype());
  const std::byte* v = static_cast<const std::byte*>(value.raw()) + index * es;
  std::byte* out = static_cast<std::byte*>(dst.raw());
  bool all_zero = true;
  for (int64_t b = 0; b < es; ++b) all_zero = all_zero && v[b] == std::byte{0};
  if (all_zero) {
    std::memset(out, 0, static_cast<size_t>(n * es));
    return;
  }
  std::memcpy(out, v, static_cast<size_t>(es));
  // Doubling copies: log2(n) memcpy calls.
  int64_t done = 1;
  while (done < n) {
    const int64_t chunk = std::min(done, n - done);
    std::memcpy(out + done * es, out, static_cast<size_t>(chunk * es));
    done += chunk;
  }
}

namespace {

struct CopyPlan {
  std::vector<int64_t> dims, ss, ds;
};

CopyPlan Coalesce(const std::vector<int64_t>& shape, const std::vector<int64_t>& ss, const std::vector<int64_t>& ds) {
  CopyPlan p;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!p.dims.empty() && p.ss.back() == ss[d] * shape[d] && p.ds.back() == ds[d] * shape[d]) {
      p.dims.back() *= shape[d];
      p.ss.back() = ss[d];
      p.ds.back() = ds[d];
    } else {
      p.dims.push_back(shape[d]);
      p.ss.push_back(ss[d]);
      p.ds.push_back(ds[d]);
    }
  }
  if (p.dims.empty()) {  // a single element
    p.dims.push_back(1);
    p.ss.push_back(1);
    p.ds.push_back(1);
  }
  return p;
}

// Calls run(src_offset, dst_offset) for every row (all coalesced dims but the innermost).
template <typename Run>
void ForEachRow(const CopyPlan& p, int64_t src_off, int64_t dst_off, bool parallel, Run&& run) {
  const int64_t r = static_cast<int64_t>(p.dims.size());
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < r; ++d) rows *= p.dims[d];
  const int64_t inner = p.dims[r - 1];
  auto body = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> counter(static_cast<size_t>(r), 0);
    int64_t so = src_off, dof = dst_off;
    int64_t rem = begin;
    for (int64_t d = r - 2; d >= 0; --d) {
      counter[d] = rem % p.dims[d];
      rem /= p.dims[d];
      so += counter[d] * p.ss[d];
      dof += counter[d] * p.ds[d];
    }
    for (int64_t row = begin; row < end; ++row) {
      run(so, dof);
      for (int64_t d = r - 2; d >= 0; --d) {
        so += p.ss[d];
        dof += p.ds[d];
        if (++counter[d] < p.dims[d]) break;
        so -= p.ss[d] * p.dims[d];
        dof -= p.ds[d] * p.dims[d];
        counter[d] = 0;
      }
    }
  };
  if (parallel) {
    ParallelFor(rows, inner, body);
  } else {
    body(0, rows);
  }
}

template <typename U>
void StridedCopyTyped(const U* src, U* dst, const CopyPlan& p, int64_t src_off, int64_t dst_off) {
  const int64_t inner = p.dims.back();
  const int64_t sst = p.ss.back(), dst_stride = p.ds.back();
  const size_t r = p.dims.size();
  if (r >= 2 && sst > 1 && p.ss[r - 2] == 1 && inner * p.dims[r - 2] >= 4096) {
    // A transpose of the last two dims: copy 32 x 32 tiles so both sides stay in cache.
    CopyPlan outer;
    outer.dims.assign(p.dims.begin(), p.dims.end() - 1);
    outer.ss.assign(p.ss.begin(), p.ss.end() - 1);
    outer.ds.assign(p.ds.begin(), p.ds.end() - 1);
    const int64_t rows = p.dims[r - 2], row_dst = p.ds[r - 2];
    constexpr int64_t kTile = 32;
    // The threads take bands of kTile rows of every outer matrix, so a single matrix (a weight's
    // transpose) splits too.
    std::vector<std::pair<int64_t, int64_t>> starts;  // (src, dst) offset of each outer matrix
    ForEachRow(outer, src_off, dst_off, false, [&](int64_t so, int64_t dof) { starts.emplace_back(so, dof); });
    const int64_t bands = (rows + kTile - 1) / kTile;
    ParallelFor(static_cast<int64_t>(starts.size()) * bands, kTile * inner, [&](int64_t first, int64_t last) {
      for (int64_t u = first; u < last; ++u) {
        const auto [so, dof] = starts[static_cast<size_t>(u / bands)];
        const int64_t i0 = (u % bands) * kTile, i1 = std::min(rows, i0 + kTile);
        for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
          const int64_t j1 = std::min(inner, j0 + kTile);
          if constexpr (sizeof(U) == 4) {
            if (dst_stride == 1) {  // rows of src to rows of dst: 8x8 register transposes
              TransposeBlock4(reinterpret_cast<const uint32_t*>(src + so + i0 + j0 * sst), sst,
                              reinterpret_cast<uint32_t*>(dst + dof + i0 * row_dst + j0), row_dst, j1 - j0, i1 - i0);
              continue;
            }
          }
          for (int64_t i = i0; i < i1; ++i) {
            const U* s = src + so + i;
            U* d = dst + dof + i * row_dst;
            for (int64_t j = j0; j < j1; ++j) d[j * dst_stride] = s[j * sst];
          }
        }
      }
    });
    return;
  }
  ForEachRow(p, src_off, dst_off, true, [&](int64_t so, int64_t dof) {
    const U* s = src + so;
    U* d = dst + dof;
    if (sst == 1 && dst_stride == 1) {
      std::memcpy(d, s, static_cast<size_t>(inner) * sizeof(U));
    } else if (sst == 0) {
      const U v = *s;
      for (int64_t i = 0; i < inner; ++i) d[i * dst_stride] = v;
    } else {
      for (int64_t i = 0; i < inner; ++i) d[i * dst_stride] = s[i * sst];
    }
  });
}

}  // namespace

void StridedCopy(const Tensor& src, int64_t src_off, const std::vector<int64_t>& src_strides, Tensor& dst,
                 int64_t dst_off, const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& shape) {
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  const CopyPlan p = Coalesce(shape, src_strides, dst_strides);
  if (src.dtype() == DataType::kString) {
    const int64_t inner = p.dims.back();
    ForEachRow(p, src_off, dst_off, false, [&](int64_t so, int64_t dof) {
      for (int64_t i = 0; i < inner; ++i) dst.strings()[dof + i * p.ds.back()] = src.strings()[so + i * p.ss.back()];
    });
    return;
  }
  const int64_t es = ElemByteSize(src.dtype());
  switch (es) {
    case 1:
      return StridedCopyTyped(src.data<uint8_t>(), dst.data<uint8_t>(), p, src_off, dst_off);
    case 2:
      return StridedCopyTyped(src.data<uint16_t>(), dst.data<uint16_t>(), p, src_off, dst_off);
    case 4:
      return StridedCopyTyped(src.data<uint32_t>(), dst.data<uint32_t>(), p, src_off, dst_off);
    case 8:
      return StridedCopyTyped(src.data<uint64_t>(), dst.data<uint64_t>(), p, src_off, dst_off);
    default: {
      const int64_t inner = p.dims.back();
      const std::byte* s = static_cast<const std::byte*>(src.raw());
      std::byte* d = static_cast<std::byte*>(dst.raw());
      ForEachRow(p, src_off, dst_off, false, [&](int64_t so, int64_t dof) {
        for (int64_t i = 0; i < inner; ++i) {
          std::memcpy(d + (dof + i * p.ds.back()) * es, s + (so + i * p.ss.back()) * es, static_cast<size_t>(es));
        }
      });
    }
  }
}

namespace {

template <typename Set>
void ForEachMappedRow(const std::vector<std::vector<int64_t>>& maps, const std::vector<int64_t>& src_strides,
                      Set&& set) {
  const size_t r = maps.size();
  for (const auto& m : maps) {
    if (m.empty()) return;
  }
  if (r == 0) {
    set(0, 0, 0);
    return;
  }
  const int64_t inner = static_cast<int64_t>(maps[r - 1].size());
  std::vector<int64_t> counter(r, 0);
  int64_t out = 0;
  while (true) {
    int64_t base = 0;
    for (size_t d = 0; d + 1 < r; ++d) base += maps[d][counter[d]] * src_strides[d];
    for (int64_t i = 0; i < inner; ++i, ++out) set(out, base, maps[r - 1][i] * src_strides[r - 1]);
    int64_t d = static_cast<int64_t>(r) - 2;
    for (; d >= 0; --d) {
      if (++counter[d] < static_cast<int64_t>(maps[d].size())) break;
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

void CopyWithIndexMaps(const Tensor& src, Tensor& dst, const std::vector<std::vector<int64_t>>& maps) {
  const std::vector<int64_t> strides = Strides(src.shape());
  if (src.dtype() == DataType::kString) {
    ForEachMappedRow(maps, strides,
                     [&](int64_t o, int64_t base, int64_t off) { dst.strings()[o] = src.strings()[base + off]; });
    return;
  }
  const int64_t es = ElemByteSize(src.dtype());
  auto typed = [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* s = src.data<U>();
    U* d = dst.data<U>();
    ForEachMappedRow(maps, strides, [&](int64_t o, int64_t base, int64_t off) { d[o] = s[base + off]; });
  };
  switch (es) {
    case 1:
      return typed(TypeTag<uint8_t>{});
    case 2:
      return typed(TypeTag<uint16_t>{});
    case 4:
      return typed(TypeTag<uint32_t>{});
    case 8:
      return typed(TypeTag<uint64_t>{});
    default: {
      const std::byte* s = static_cast<const std::byte*>(src.raw());
      std::byte* d = static_cast<std::byte*>(dst.raw());
      ForEachMappedRow(maps, strides, [&](int64_t o, int64_t base, int64_t off) {
        std::memcpy(d + o * es, s + (base + off) * es, static_cast<size_t>(es));
      });
    }
  }
}

Tensor TransposeView(const Tensor& src, const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> in_strides = Strides(in_shape);
  std::vector<int64_t> out_shape(perm.size()), src_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_shape[i] = in_shape[perm[i]];
    src_strides[i] = in_strides[perm[i]];
  }
  Tensor out = Tensor::Uninitialized(src.dtype(), out_shape);  // the copy writes every element
  StridedCopy(src, 0, src_strides, out, 0, Strides(out_shape), out_shape);
  return out;
}

}  // namespace tensor_kernels
}  // namespace memopt
