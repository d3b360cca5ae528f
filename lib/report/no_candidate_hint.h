// Why a scan found no recompute candidate, for a hint under the empty table. The usual reason:
// what the forward pass stashes comes from ops the recompute table lacks (ORT's table has no
// Relu, so a Relu MLP has nothing to recompute), and `--op-table FILE` can add them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/op_table.h"
#include "analysis/scan.h"
#include "ir/graph.h"

namespace memopt {

/// Stashed forward nodes of one op type that the scan could not recompute.
struct UnrecomputableOp {
  std::string op;              ///< "Relu", "com.microsoft::Foo"
  int nodes = 0;
  std::optional<SymExpr> bytes;  ///< their stashed outputs; nullopt when some size is unknown
  int64_t sort_bytes = 0;        ///< bytes at `dims`, unbound dims at 1024, unknown sizes 0
};

/// Op types of the stashed nodes rejected as "not recomputable", by stashed bytes (descending),
/// then name.
std::vector<UnrecomputableOp> UnrecomputableStashedOps(const Graph& graph, const ScanResult& scan,
                                                       const DimBindings& dims);

/// One line for the user when the scan shows no candidate (a training graph, no plan group at
/// this level); nullopt when there are candidates or nothing to say. Names the top `top` op types
/// of UnrecomputableStashedOps with their bytes and points to --ops extended (for those of them
/// memopt's extended table lists and `scan_table`, the table the scan used, nullptr = ORT's, does
/// not), --op-table (and --level 2 when only compromised plans exist, --level 1 when ops are
/// advanced).
std::optional<std::string> NoCandidateHint(const Graph& graph, const ScanResult& scan, const DimBindings& dims,
                                           size_t top = 3, const OpTable* scan_table = nullptr);

}  // namespace memopt
