// TensorProto <-> Tensor, and the `--inputs DIR/*.pb` convention of memopt run.
#pragma once

#include <map>
#include <string>

#include <onnx/onnx_pb.h>

#include "exec/tensor.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

Expected<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir = ".");
onnx::TensorProto TensorToProto(const Tensor& tensor, const std::string& name);
Expected<Tensor> ReadTensorFile(const std::string& path, std::string* name = nullptr);
Status WriteTensorFile(const std::string& path, const Tensor& tensor, const std::string& name);

/// An expected value of a graph output, read from an ONNX test-data set (output_<i>.pb).
struct ExpectedOutput {
  Tensor tensor;
  std::string file;
};

/// The `--inputs DIR` convention, which includes ONNX test-data sets (`test_data_set_0/`): every
/// DIR/*.pb (sorted by file name) is a TensorProto. One whose name is a graph input binds to it
/// by name, else a file named input_<i>.pb binds to graph.inputs[i]. A file named output_<i>.pb,
/// or one whose tensor name is a graph output, is the expected value of that output (by name,
/// else graph.outputs[i]); these go to `expected` (ignored when it is null). In a training graph,
/// a tensor (or file stem) named as a YieldOp output or "<module output>_grad" is the incoming
/// gradient of that output (exec/output_gradients.h) and goes to `output_grads` under the YieldOp
/// output's name. A file matching none of these, or two files for one input or output, is an
/// error naming them.
Expected<std::map<std::string, Tensor>> ReadInputDir(const std::string& dir, const Graph& graph,
                                                     std::map<std::string, ExpectedOutput>* expected = nullptr,
                                                     std::map<std::string, Tensor>* output_grads = nullptr);

/// File name for a saved output: the value name with '/' and ':' replaced by '_', plus ".pb".
std::string OutputFileName(const std::string& value_name);

}  // namespace memopt
