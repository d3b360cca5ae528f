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
#include <vector>

#include "plan/step_effect.h"
#include "util/status.h"

namespace memopt {

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
};

/// `units`: the caller's units (each a set of plan indices). Effects are computed on every core.
Expected<ProgramUnits> BuildProgramUnits(const StepEffects& effects, const std::vector<std::vector<size_t>>& units,
                                         size_t max_unions = 16384);

}  // namespace memopt
