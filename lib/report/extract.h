// A recompute candidate as a small ONNX model (`scan --show CLUSTER_ID --extract FILE.onnx`) that
// opens in Netron (or any ONNX tool):
//   * nodes: the recomputed forward nodes (execution order), then the backward consumers of the
//     stashed tensors (execution order), each NodeProto copied unchanged (attributes, domain);
//   * graph inputs: every tensor these nodes read that none of them produces, typed with the
//     inferred dtype and shape (symbolic dims as dim_param); small integer initializers whose
//     values the loader decoded (shape constants, axes) are embedded as initializers instead,
//     weights never are (their bytes are not read);
//   * graph outputs: the stashed tensors, then the consumers' outputs;
//   * value_info: the other tensors the recompute produces, so Netron shows their shapes;
//   * the opset imports of the source model; ir_version and a doc string naming the candidate.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "report/candidate_subgraph.h"
#include "util/status.h"

namespace memopt {

struct ExtractOptions {
  int64_t ir_version = 8;       ///< the source model's ir_version (Model::ir_version) when known
  std::string source_model;     ///< named in the doc string
};

/// The serialized ModelProto. Errors (kInternal) only if serialization fails.
Expected<std::string> ExtractCandidateModel(const Graph& graph, const ScanResult& scan,
                                            const CandidateSubgraph& candidate, const ExtractOptions& options = {});

}  // namespace memopt
