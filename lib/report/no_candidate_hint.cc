#include "report/no_candidate_hint.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "ir/op_key.h"
#include "util/bytes.h"

namespace memopt {

namespace {

constexpr std::string_view kNotRecomputable = "not recomputable: ";

/// Bytes of the outputs of `n` that a backward node reads; nullopt when one is unsized.
std::optional<SymExpr> StashedBytes(const Graph& graph, const ExecutionOrder& order, NodeId n) {
  SymExpr sum;
  for (ValueId v : graph.node(n).outputs) {
    if (v == kNone) continue;
    const Value& value = graph.value(v);
    const bool stashed = std::any_of(value.consumers.begin(), value.consumers.end(),
                                     [&](const auto& c) { return order.IsBackward(c.first); });
    if (!stashed) continue;
    auto bytes = value.info.Bytes();
    if (!bytes) return std::nullopt;
    sum += *bytes;
  }
  return sum;
}

int64_t BytesAt(const SymExpr& e, const DimBindings& dims) {
  DimBindings all = dims;
  for (const std::string& s : e.Symbols()) {
    if (!all.Get(s)) all.Set(s, 1024);
  }
  auto v = e.EvaluateInt(all);
  return v.ok() ? *v : 0;
}

std::string BytesText(const std::optional<SymExpr>& bytes, const DimBindings& dims) {
  if (!bytes) return "size unknown";
  const SymExpr at = bytes->Substitute(dims);
  if (auto v = at.AsInt()) return HumanBytes(*v);
  return at.ToString() + " bytes";
}

}  // namespace

std::vector<UnrecomputableOp> UnrecomputableStashedOps(const Graph& graph, const ScanResult& scan,
                                                       const DimBindings& dims) {
  std::map<std::string, UnrecomputableOp> by_op;
  for (const RejectedCandidate& r : scan.rejected) {
    if (r.reason.rfind(kNotRecomputable, 0) != 0) continue;
    // The YieldOp's outputs are the incoming gradients, not activations.
    if (scan.boundary.kind == Boundary::Kind::kYieldOp && r.node == scan.boundary.node) continue;
    const std::string op = OpKey::Of(graph.node(r.node)).ToString();
    UnrecomputableOp& entry = by_op[op];
    if (entry.nodes == 0) {
      entry.op = op;
      entry.bytes = SymExpr();
    }
    ++entry.nodes;
    auto bytes = StashedBytes(graph, scan.order, r.node);
    if (entry.bytes && bytes) {
      *entry.bytes += *bytes;
    } else {
      entry.bytes.reset();
    }
    if (bytes) entry.sort_bytes += BytesAt(*bytes, dims);
  }
  std::vector<UnrecomputableOp> out;
  for (auto& [op, entry] : by_op) out.push_back(std::move(entry));
  std::stable_sort(out.begin(), out.end(),
                   [](const UnrecomputableOp& a, const UnrecomputableOp& b) { return a.sort_bytes > b.sort_bytes; });
  return out;
}

std::optional<std::string> NoCandidateHint(const Graph& graph, const ScanResult& scan, const DimBindings& dims,
                                           size_t top, const OpTable* scan_table) {
  if (scan.boundary.kind == Boundary::Kind::kNone || !scan.groups.empty()) return std::nullopt;
  if (!scan.plans.empty()) {
    return fmt::format("no recompute candidate at this level, but {} compromised plan(s) exist; rerun with --level 2",
                       scan.plans.size());
  }
  const std::vector<UnrecomputableOp> ops = UnrecomputableStashedOps(graph, scan, dims);
  if (ops.empty()) {
    if (scan.rejected.empty()) return std::nullopt;
    return fmt::format("no recompute candidate: none of the {} stashed node(s) has a recompute subgraph (see --details)",
                       scan.rejected.size());
  }
  std::string list;
  for (size_t i = 0; i < ops.size() && i < top; ++i) {
    list += fmt::format("{}{} ({} node{}, {})", i ? ", " : "", ops[i].op, ops[i].nodes, ops[i].nodes == 1 ? "" : "s",
                        BytesText(ops[i].bytes, dims));
  }
  if (ops.size() > top) list += fmt::format(" and {} more op type(s)", ops.size() - top);
  bool advanced = false;
  for (const RejectedCandidate& r : scan.rejected) {
    advanced = advanced || r.reason.find("recomputable only at probe level") != std::string::npos;
  }
  // Ops memopt's extended table would make recomputable (when the scan did not use it).
  std::string extended;
  for (size_t i = 0; i < ops.size() && i < top; ++i) {
    const UnrecomputableOp& o = ops[i];
    const OpTable::OpEntry* e = OpTable::Extended().Find("", o.op);
    if (e == nullptr || OpTable::Builtin().Find("", o.op) != nullptr) continue;
    if (scan_table != nullptr && scan_table->Find("", o.op) != nullptr) continue;
    extended += (extended.empty() ? "" : ", ") + o.op;
  }
  return fmt::format(
      "no recompute candidate: the forward pass stashes the outputs of ops that are not recomputable: {}; {}"
      "--op-table FILE adds ops to the recompute table (format: configs/recompute_ops.json){}; --details lists "
      "every stashed node",
      list, extended.empty() ? "" : "--ops extended makes " + extended + " recomputable (memopt's extended table); ",
      advanced ? ", --level 1 uses the advanced table" : "");
}

}  // namespace memopt
