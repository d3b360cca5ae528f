// Plan savings and the plan table: plans grouped by ORT's combination id
// "<cluster>:<type>:-1" (the rows of ORTModule's "Plan N" table, with Freq = number of plans).
//
// Saving of one plan = sum over ALL its stashed outputs of bytes x save_ratio. ORT counts only
// the last output of a multi-output node (a string-building quirk, reference §4.4); memopt fixes
// that (docs/scan.md). Groups are sorted by saving, descending, evaluated at the bound dims with
// every unbound dim set to kUnboundDimForOrdering (ordering only), ties by config ascending.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/scan.h"
#include "sym/sym_expr.h"

namespace memopt {

/// "<cluster_id>:<type>:-1", e.g. "Gelu+:1:-1".
std::string PlanConfig(const RecomputePlan& plan);

/// Fills every plan's `saving` (nullopt when some stashed output has an unknown size).
void ComputePlanSavings(std::vector<RecomputePlan>& plans);

/// Groups the plans shown at `level` (0/1: type 1 only; 2: types 1 and 2), sorted as above.
/// saving_bytes is set when `dims` binds every symbol of the saving.
std::vector<PlanGroup> BuildPlanGroups(const std::vector<RecomputePlan>& plans, const ExecutionOrder& order,
                                       int level, const DimBindings& dims);

}  // namespace memopt
