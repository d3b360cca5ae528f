// Since-version resolution: the schema version a node binds to, given the model's opset imports.
//
// A node binds to the newest schema of its (domain, op_type) whose since_version is <= the model's
// opset for that domain. Three sources of schema versions are merged:
//   1. the ONNX schema registry linked in (ONNX 1.12 knows ai.onnx opsets <= 17);
//   2. tables of ai.onnx versions introduced in opsets 18..23 and ai.onnx.ml versions of ml opsets
//      4..5, which the linked ONNX does not know (facts from the ONNX operator changelog);
//   3. ONNX Runtime contrib/training schemas registered in the ONNX domain (LayerNormalization and
//      SimplifiedLayerNormalization v1, the pooling gradients v9, ...).
// Nodes in non-ONNX domains (com.microsoft, org.pytorch.aten, ...) resolve to 1: every ORT contrib
// op is registered once, at version 1.
#include <algorithm>
#include <string_view>
#include <utility>

#include <onnx/defs/schema.h>

#include "ir/graph.h"

namespace memopt {

namespace {

struct VersionList {
  std::string_view op;
  std::initializer_list<int> versions;
};

// ai.onnx schema versions in opsets 18..23 (the linked ONNX 1.12 stops at 17).
const VersionList kNewerOnnxVersions[] = {
    {"Acos", {22}}, {"Acosh", {22}}, {"AffineGrid", {20}}, {"Asin", {22}}, {"Asinh", {22}}, {"Atan", {22}},
    {"Atanh", {22}}, {"Attention", {23}}, {"AveragePool", {19, 22}}, {"Bernoulli", {22}},
    {"BitwiseAnd", {18}}, {"BitwiseNot", {18}}, {"BitwiseOr", {18}}, {"BitwiseXor", {18}},
    {"Cast", {19, 21, 23}}, {"CastLike", {19, 21, 23}}, {"CenterCropPad", {18}}, {"Col2Im", {18}},
    {"Constant", {19, 21, 23}}, {"ConstantOfShape", {20, 21, 23}}, {"Conv", {22}}, {"ConvTranspose", {22}},
    {"Cos", {22}}, {"Cosh", {22}}, {"DFT", {20}}, {"DeformConv", {19, 22}},
    {"DequantizeLinear", {19, 21, 23}}, {"Det", {22}}, {"Dropout", {22}}, {"Elu", {22}}, {"Equal", {19}},
    {"EyeLike", {22}}, {"Flatten", {21, 23}}, {"GRU", {22}}, {"Gelu", {20}}, {"GlobalAveragePool", {22}},
    {"GlobalLpPool", {22}}, {"GlobalMaxPool", {22}}, {"GridSample", {20, 22}},
    {"GroupNormalization", {18, 21}}, {"HardSigmoid", {22}}, {"HardSwish", {22}}, {"Identity", {19, 21, 23}},
    {"If", {19, 21, 23}}, {"ImageDecoder", {20}}, {"InstanceNormalization", {22}}, {"IsInf", {20}},
    {"IsNaN", {20}}, {"LSTM", {22}}, {"Loop", {19, 21, 23}}, {"LpNormalization", {22}}, {"LpPool", {18, 22}},
    {"MaxPool", {22}}, {"MaxRoiPool", {22}}, {"MaxUnpool", {22}}, {"Mish", {18, 22}}, {"Multinomial", {22}},
    {"NegativeLogLikelihoodLoss", {22}}, {"OptionalGetElement", {18}}, {"OptionalHasElement", {18}},
    {"Pad", {18, 19, 21, 23}}, {"QLinearMatMul", {21}}, {"QuantizeLinear", {19, 21, 23}},
    {"RMSNormalization", {23}}, {"RNN", {22}}, {"RandomNormal", {22}}, {"RandomNormalLike", {22}},
    {"RandomUniform", {22}}, {"RandomUniformLike", {22}}, {"ReduceL1", {18}}, {"ReduceL2", {18}},
    {"ReduceLogSum", {18}}, {"ReduceLogSumExp", {18}}, {"ReduceMax", {18, 20}}, {"ReduceMean", {18}},
    {"ReduceMin", {18, 20}}, {"ReduceProd", {18}}, {"ReduceSumSquare", {18}}, {"RegexFullMatch", {20}},
    {"Reshape", {19, 21, 23}}, {"Resize", {18, 19}}, {"RoiAlign", {22}}, {"RotaryEmbedding", {23}},
    {"Round", {22}}, {"Scan", {19, 21, 23}}, {"ScatterElements", {18}}, {"ScatterND", {18}}, {"Selu", {22}},
    {"Shape", {19, 21, 23}}, {"Sin", {22}}, {"Sinh", {22}}, {"Size", {19, 21, 23}}, {"Softplus", {22}},
    {"Softsign", {22}}, {"Split", {18}}, {"Squeeze", {21, 23}}, {"StringConcat", {20}},
    {"StringSplit", {20}}, {"Tan", {22}}, {"ThresholdedRelu", {22}}, {"Transpose", {21, 23}},
    {"Unsqueeze", {21, 23}},
};

// ai.onnx.ml schema versions in ml opsets 4..5 (the linked ONNX 1.12 stops at 3).
const VersionList kNewerOnnxMlVersions[] = {
    {"LabelEncoder", {4}}, {"TreeEnsemble", {5}}, {"TreeEnsembleClassifier", {5}},
    {"TreeEnsembleRegressor", {5}},
};

// ONNX Runtime schemas registered in the ONNX domain (contrib and training ops).
const VersionList kOrtOnnxDomainVersions[] = {
    {"LayerNormalization", {1}},  {"SimplifiedLayerNormalization", {1}},
    {"AveragePoolGrad", {9}},     {"MaxPoolGrad", {9}},
    {"SparseSoftmaxCrossEntropy", {9}}, {"SparseSoftmaxCrossEntropyGrad", {9}},
    {"GatherND", {1}},            {"MemcpyFromHost", {1}},
    {"MemcpyToHost", {1}},
};

bool IsOnnxDomain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx" || domain == "ai.onnx.ml" ||
         domain == "ai.onnx.training" || domain == "ai.onnx.preview.training";
}

/// Newest version in `table` for `op` that is <= `opset`; 0 when none.
template <size_t N>
int NewestInTable(const VersionList (&table)[N], const std::string& op, int64_t opset) {
  int best = 0;
  for (const auto& entry : table) {
    if (entry.op != op) continue;
    for (int v : entry.versions) {
      if (v <= opset) best = std::max(best, v);
    }
  }
  return best;
}

int RegistryVersion(const std::string& op, const std::string& domain, int64_t opset) {
  const int capped = static_cast<int>(std::clamp<int64_t>(opset, 0, 1000));
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, capped, domain);
  return schema == nullptr ? 0 : schema->SinceVersion();
}

}  // namespace

int ResolveSinceVersion(const Graph& graph, const std::string& domain_in, const std::string& op_type) {
  const std::string domain = (domain_in == "ai.onnx") ? std::string() : domain_in;
  if (!IsOnnxDomain(domain)) return 1;

  int64_t opset = graph.OpsetVersion(domain);
  if (opset <= 0) opset = 1000;  // no import for the domain: bind to the newest schema known
  try {
    int best = RegistryVersion(op_type, domain, opset);
    if (domain.empty()) {
      best = std::max(best, NewestInTable(kNewerOnnxVersions, op_type, opset));
      best = std::max(best, NewestInTable(kOrtOnnxDomainVersions, op_type, opset));
      // ONNX Gelu exists only from opset 20; an older model using it binds to that schema.
      if (best == 0 && op_type == "Gelu") best = 20;
    } else if (domain == "ai.onnx.ml") {
      best = std::max(best, NewestInTable(kNewerOnnxMlVersions, op_type, opset));
    }
    return best;
  } catch (...) {
    return 0;  // the registry never throws for lookups, but the library must not either
  }
}

void ResolveSinceVersions(Graph& graph) {
  for (auto& node : graph.nodes) {
    node.since_version = ResolveSinceVersion(graph, node.domain, node.op_type);
  }
}

}  // namespace memopt
