// How a run binds the graph inputs and initializers, shared by the CPU executor and the CUDA one
// (cuda/cuda_executor.cc) so that both check feeds, load weights and count memory the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "exec/memory_tracker.h"
#include "exec/tensor.h"
#include "io/model_loader.h"
#include "util/status.h"

namespace memopt {

struct InputSink {
  /// Stores a fed graph input, a fed initializer or an initializer read from the model (a
  /// scheduled node or a graph output reads it).
  std::function<Status(ValueId, const Tensor&)> bind;
  /// Called for an initializer nothing in `order` reads: not loaded, but counted (`bytes`), like
  /// the static estimate counts every weight. nullptr: counted only.
  std::function<Status(ValueId, int64_t bytes)> unread_initializer;
};

/// Checks every feed (a graph input or initializer of the model; inputs against their declared
/// type and dims), binds graph inputs from the feeds and initializers from the feeds or the model
/// file, and registers each as always live in `tracker`. Errors name the input or initializer.
Status BindInputs(const Model& model, const std::vector<NodeId>& order, const std::map<std::string, Tensor>& feeds,
                  MemoryTracker& tracker, const InputSink& sink);

}  // namespace memopt
