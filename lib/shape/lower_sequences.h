// Rewrites ONNX sequence ops into tensor ops where every sequence's length and every position is
// known on load. Exporters build sequences of a fixed length: PyTorch's dynamo exporter writes
// torch.split / chunk / unbind as SplitToSequence + SequenceAt (GPT-2's fused QKV projection with
// optimize=False), and lists as SequenceConstruct + ConcatFromSequence. memopt's executors, shape
// rules, gradients and memory accounting work on tensors, so each sequence becomes the list of
// tensors it holds:
//
//   SplitToSequence     -> Split (+ Squeeze per piece when keepdims=0 without `split` or with a
//                          scalar split of 1: ONNX Runtime's reading, which PyTorch's unbind needs)
//   SequenceConstruct   -> its inputs          SequenceEmpty -> no tensor
//   SequenceInsert/Erase-> the list, edited    SequenceLength -> an int64 Constant
//   SequenceAt          -> the tensor itself (consumers read it; an Identity for a graph output)
//   ConcatFromSequence  -> Concat (+ Unsqueeze per tensor with new_axis=1)
//
// A sequence stays as it is when its length or a position is unknown (e.g. split along a symbolic
// dim), when it is a graph input or output, or when another op (Loop, SequenceMap, ...) reads it;
// one warning names them (the first three, with the reason), since the executors and `grad` cannot
// run them. Lowering repeats while it makes progress: an unrolled recurrence splits what it read
// back from the previous split.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

struct LowerSequencesStats {
  int lowered_nodes = 0;              ///< sequence nodes replaced
  std::vector<std::string> warnings;  ///< at most one: the sequence nodes left, with the reasons
};

/// Lowers the sequence ops of `graph` (in place) as described above.
Expected<LowerSequencesStats> LowerSequences(Graph& graph);

}  // namespace memopt
