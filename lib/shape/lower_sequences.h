// Rewrites ONNX sequence ops into tensor ops where every sequence's length and every position is
// known on load. Exporters build sequences of a fixed length: PyTorch's dynamo exporter writes
// torch.split / chunk / unbind as SplitToSequence + SequenceAt (GPT-2's fused QKV projection with
// optimize=False), and lists as SequenceConstruct + ConcatFromSequence. memopt's executors, shape
// rules, gradients and memory accounting work on tensors, so each sequence becomes the list of
// tensors it holds:
//
//   SplitToSequence     -> Split (+ Squeeze per piece when keepdims=0 without `split`)
//   SequenceConstruct   -> its inputs          SequenceEmpty -> no tensor
//   SequenceInsert/Erase-> the list, edited    SequenceLength -> an int64 Constant
//   SequenceAt          -> the tensor itself (consumers read it; an Identity for a graph output)
//   ConcatFromSequence  -> Concat (+ Unsqueeze per tensor with new_axis=1)
//
// A sequence stays as it is when its length or a position is unknown (e.g. split along a symbolic
// dim), when it is a graph input or output, or when another op (Loop, SequenceMap, ...) reads it;
// each such node gets a warning saying why, since the executors and `grad` cannot run it.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

struct LowerSequencesStats {
  int lowered_nodes = 0;              ///< sequence nodes replaced
  std::vector<std::string> warnings;  ///< one per sequence node left, with the reason
};

/// Lowers the sequence ops of `graph` (in place) as described above.
Expected<LowerSequencesStats> LowerSequences(Graph& graph);

}  // namespace memopt
