// The units the budget program chooses from (plan/budget_ilp.h), with their exact effects.
//
// The program adds up the effects of the units it picks (StepEffects::EffectOf of each alone).
// That sum is exact for units whose rewrites touch disjoint things (cloned nodes, original values
// read or freed, clone positions: the keys of EffectOf); units that share any of them interact: a
// clone shared by the three Q/K/V plans of a layer runs once, not three times, and a recompute
// chained onto another one frees more than either alone. Such units form an interaction group (in
// a transformer, usually one layer: its recomputable values chain into each other). For groups of
// 2 to 16 units, smallest first while their unions total at most `max_unions` (2^k - 1 - k for a
// group of k), each union of two or more units becomes a unit of its own, with its exact effect
// and cost, and the program picks at most one unit per group: the program is then exact for every
// combination inside those groups. Other groups keep single units, whose interactions the exact
// check and the tightening of the program handle (small graphs are modelled exactly, deep ones
// approximately).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "plan/step_effect.h"
#include "util/status.h"

namespace memopt {

class RewriteSpecBuilder;

struct ProgramUnits {
  std::vector<std::vector<size_t>> plans;    ///< per program unit: plan indices (ScanResult::plans)
  std::vector<std::vector<size_t>> members;  ///< per program unit: the caller's units it stands for
  std::vector<std::vector<StepRun>> runs;    ///< per program unit: its effect alone
  std::vector<int32_t> group;                ///< per program unit: its small interaction group, or -1
  std::vector<uint32_t> mask;                ///< per program unit in a group: its members, as bits
  /// Per small group: the program unit of each mask of its members (index = mask; entry 0 is -1).
  std::vector<std::vector<int32_t>> group_units;
  std::vector<char> every;  ///< the program units that stand for every caller unit at once
  int simulations = 0;      ///< effects that needed a full simulation
  /// Links among single units outside the small groups (LinkUnits): (unit, unit it requires),
  /// x_unit <= x_required, and sets of which at most one unit is chosen.
  std::vector<std::pair<int32_t, int32_t>> implied;
  std::vector<std::vector<int32_t>> at_most_one;
};

/// `units`: the caller's units (each a set of plan indices). Effects are computed on every core.
Expected<ProgramUnits> BuildProgramUnits(const StepEffects& effects, const std::vector<std::vector<size_t>>& units,
                                         size_t max_unions = 16384);

/// Outside the small groups the program adds single units' effects, which is wrong, and badly
/// (the peak of a 12-layer transformer planned hundreds of MB low), where units are alternatives
/// or extensions of one another rather than independent choices. LinkUnits makes those relations
/// explicit for the single units of one plan each (`builder`: what the plan indices mean):
///   * a variant (split, keep, private chain; rewrite/rewrite_spec.h) implies its plan, so its
///     effect alone contains the plan's: when its plan is a unit too, the variant's runs become its
///     increment over the plan's and the variant requires the plan;
///   * the latest keep of a plan wins and voids its splits at or before it: at most one keep per
///     plan, and a keep excludes each of those splits;
///   * plans of one entry node (ORT's and a checkpoint plan, rewrite of the same stashed value in
///     two ways) are alternatives: at most one of them.
/// Units inside small groups need none of this (their unions are enumerated exactly).
void LinkUnits(const RewriteSpecBuilder& builder, ProgramUnits& program);

/// `a` minus `b` as runs (ascending, disjoint, nonzero).
std::vector<StepRun> SubtractRuns(const std::vector<StepRun>& a, const std::vector<StepRun>& b);

}  // namespace memopt
