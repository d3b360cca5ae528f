// `--timeline FILE` for the subcommands: builds the timeline view and writes FILE.html / FILE.svg
// (or SVG to stdout for "-"). scan draws the scanned order; plan (and apply) overlay the rewritten
// step on the original.
#pragma once

#include <string>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt::cli {

struct ScanTimelineRequest {
  std::string path;        ///< --timeline value
  std::string model_path;  ///< as the user gave it
  int level = 1;
};

/// The original step only (memopt scan).
Status WriteScanTimeline(const ScanTimelineRequest& request, const Graph& graph, const ScanResult& scan,
                         const DimBindings& dims);

struct RewriteTimelineRequest {
  std::string path;
  std::string model_path;
  std::string command = "plan";  ///< "plan" or "apply", for the title
  std::string mode;              ///< e.g. "level 1" or "budget 12GiB", for the subtitle
};

/// The original step with the rewritten one overlaid (memopt plan / apply): `rewritten` and
/// `rewritten_order` are the rewritten graph and the order it runs in (RewrittenGraph).
Status WriteRewriteTimeline(const RewriteTimelineRequest& request, const Graph& graph, const ScanResult& scan,
                            const Graph& rewritten, const ExecutionOrder& rewritten_order, const DimBindings& dims);

}  // namespace memopt::cli
