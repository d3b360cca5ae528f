// Where a step's time goes, by op type: the executors add each node's time when a run asks for it
// (RunOptions::profile, CudaRunOptions::profile), and `memopt bench --profile` lists the op types
// by time per step. The CPU executor times each node's kernel on the wall clock; the CUDA executor
// records an event between consecutive nodes, so a node's share there also holds the launch gap
// before it and the shares add up to the step.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace memopt {

struct OpTime {
  std::string op;     ///< OpKey::ToString: "MatMul", "com.microsoft::FusedMatMul"
  int64_t nodes = 0;  ///< nodes of this op type timed, summed over the runs
  double ms = 0;      ///< their time, summed over the runs
};

class OpProfile {
 public:
  void Add(const Node& node, double ms);
  /// Counts one profiled run (the per-step figures divide by the runs).
  void EndRun() { ++runs_; }
  int runs() const { return runs_; }
  /// Per step (averaged over the runs): the op types by time, longest first, ties by name.
  std::vector<OpTime> PerStep() const;

 private:
  std::map<std::string, OpTime> by_op_;
  int runs_ = 0;
};

}  // namespace memopt
