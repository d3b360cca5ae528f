// Inputs of `memopt run` and `memopt bench`: tensors from --inputs DIR, the rest seeded random
// values (exec/random_inputs.h), with symbolic dims bound from --dims and from the given tensors.
#pragma once

#include <map>
#include <string>

#include "exec/tensor.h"
#include "exec/tensor_io.h"
#include "io/model_loader.h"

namespace memopt::cli {

struct RunInputs {
  std::map<std::string, Tensor> feeds;
  std::map<std::string, std::string> origin;  ///< input name -> "file" or "random"
  DimBindings dims;                           ///< --dims plus dims read off the given tensors
  /// Expected graph outputs found in --inputs (output_<i>.pb of an ONNX test-data set), by name.
  std::map<std::string, ExpectedOutput> expected;
  /// Incoming gradients of the module outputs found in --inputs (<output>_grad.pb), by YieldOp
  /// output name (exec/output_gradients.h).
  std::map<std::string, Tensor> output_grads;
};

/// `inputs_dir` may be empty. `given` (already bound tensors, e.g. the first model's inputs for a
/// second bench model) is used by input name before random values are made.
Expected<RunInputs> PrepareInputs(const Graph& graph, const std::string& inputs_dir, const std::string& dims_text,
                                  uint64_t seed, const std::map<std::string, Tensor>& given = {});

}  // namespace memopt::cli
