#!/usr/bin/env bash
# Regenerates small binary test models from protobuf text, with protoc (the protobuf-compiler
# package) and ONNX's onnx.proto; deterministic. The outputs are committed; the tests do not run
# this script.
#
#   tests/data/versions/ir14_opset23.onnx  a Gemm-Relu-Gemm MLP with ir_version 14 (newer than
#       memopt knows) and ai.onnx opset 23, plus a model field no IR version defines yet (number
#       100): it loads with a warning
#   tests/data/versions/opset99.onnx       a Relu with ai.onnx opset 99: loads with a warning
#   tests/data/grad_cases/if_branch.onnx   the loss depends on the trainable tensor only through
#       an If branch: grad names the If as the op without a gradient rule
#   tests/data/grad_cases/tied_layernorm.onnx  two layers whose LayerNorms read one weight and
#       one bias initializer, as an eval-mode torch.onnx.export writes equal parameters: grad warns
#   tests/data/grad_cases/relu_mlp.onnx    x -> Gemm -> Relu -> Gemm -> SoftmaxCrossEntropyLoss
#   tests/data/plan/relu_mlp_train.onnx    its training graph (`memopt grad`, when MEMOPT names a
#       memopt binary, default build/tools/memopt): nothing in it is recomputable with ORT's table
#   tests/data/run/huge_input.onnx         Relu of a float[2^20, 2^20] input (4 TiB): allocation
#       failures are errors, not aborts
#   tests/data/run/sym_relu.onnx           Relu(Relu(x[batch, seq])): --dims overflow goldens
#   tests/data/run/unknown_size.onnx       a custom-domain op without a shape rule feeding Relu:
#       values of unknown size make the CI gates fail closed
#   tests/data/plan/peak_raising_level1.onnx  a training graph whose level-1 plan raises the peak:
#       plan and apply warn
#   tests/data/bad/conv_pads_2d.onnx       a 2-D Conv with 2 pads (it takes 4): every subcommand
#       rejects it on load with one error
# (tests/data/run/maxpool_stem.onnx, the ResNet stem Conv -> MaxPool k3 s2 p1 -> ReduceMean with a
# symbolic batch, was written with the onnx Python package; maxpool_stem_train.onnx is its
# `memopt grad` output.)
#
# Run from the repository root:  scripts/make_proto_models.sh
set -euo pipefail
cd "$(dirname "$0")/.."
proto_dir=${ONNX_PROTO_DIR:-/usr/include}
memopt=${MEMOPT:-build/tools/memopt}
encode() { protoc -I"$proto_dir" --encode=onnx.ModelProto onnx/onnx.proto; }
mkdir -p tests/data/versions tests/data/grad_cases

tensor() {  # name dims... -- values...: a float initializer
  local name=$1; shift
  printf '  initializer { name: "%s" data_type: 1' "$name"
  while [[ $1 != -- ]]; do printf ' dims: %s' "$1"; shift; done
  shift
  for v in "$@"; do printf ' float_data: %s' "$v"; done
  printf ' }\n'
}
value() {  # name elem_type dims...: a tensor value_info (a dim that is not a number is symbolic)
  local name=$1 type=$2; shift 2
  printf '{ name: "%s" type { tensor_type { elem_type: %s shape {' "$name" "$type"
  for d in "$@"; do
    if [[ $d =~ ^[0-9]+$ ]]; then printf ' dim { dim_value: %s }' "$d"; else printf ' dim { dim_param: "%s" }' "$d"; fi
  done
  printf ' } } } }'
}
values() {  # count seed: deterministic values in [-0.8, 0.8]
  local i
  for ((i = 0; i < $1; i++)); do printf '%s ' "$(( (i * 37 + $2) % 17 - 8 )).0e-1"; done
}

{
  echo 'ir_version: 14'
  echo 'producer_name: "make_proto_models"'
  echo 'graph {'
  echo '  node { input: "x" input: "w1" input: "b1" output: "h" name: "fc1" op_type: "Gemm" }'
  echo '  node { input: "h" output: "r" name: "relu" op_type: "Relu" }'
  echo '  node { input: "r" input: "w2" input: "b2" output: "y" name: "fc2" op_type: "Gemm" }'
  echo '  name: "mlp"'
  tensor w1 4 3 -- 0.5 -0.25 0.125 1 -1 0.75 0.25 0.5 -0.5 -0.125 1.5 0.25
  tensor b1 3 -- 0 0.1 -0.1
  tensor w2 3 2 -- 1 -1 0.5 0.25 -0.75 2
  tensor b2 2 -- 0 0
  echo "  input $(value x 1 2 4)"
  echo "  output $(value y 1 2 2)"
  echo '}'
  echo 'opset_import { domain: "" version: 23 }'
} | encode >tests/data/versions/ir14_opset23.onnx
# Field 100 (varint 1): tag 100 << 3 = 800 = 0xa0 0x06.
printf '\xa0\x06\x01' >>tests/data/versions/ir14_opset23.onnx

{
  echo 'ir_version: 8'
  echo 'producer_name: "make_proto_models"'
  echo 'graph {'
  echo '  node { input: "x" output: "y" name: "r" op_type: "Relu" }'
  echo '  name: "g"'
  echo "  input $(value x 1 2 3)"
  echo "  output $(value y 1 2 3)"
  echo '}'
  echo 'opset_import { domain: "" version: 99 }'
} | encode >tests/data/versions/opset99.onnx

# loss = ReduceSum(If(cond, then: x * w, else: x)); w is read only inside the then branch.
{
  echo 'ir_version: 8'
  echo 'producer_name: "make_proto_models"'
  echo 'graph {'
  echo '  node { input: "cond" output: "y" name: "/branch/If" op_type: "If"'
  echo '    attribute { name: "then_branch" type: GRAPH g {'
  echo '      node { input: "x" input: "w" output: "t" name: "/branch/then/Mul" op_type: "Mul" }'
  echo "      name: \"then\" output $(value t 1 2 3) } }"
  echo '    attribute { name: "else_branch" type: GRAPH g {'
  echo '      node { input: "x" output: "e" name: "/branch/else/Identity" op_type: "Identity" }'
  echo "      name: \"else\" output $(value e 1 2 3) } } }"
  echo '  node { input: "y" output: "loss" name: "/loss/ReduceSum" op_type: "ReduceSum"'
  echo '    attribute { name: "keepdims" type: INT i: 0 } }'
  echo '  name: "if_branch"'
  tensor w 3 -- 0.5 -1 2
  echo "  input $(value x 1 2 3)"
  echo "  input $(value cond 9)"
  echo "  output $(value loss 1)"
  echo "  value_info $(value y 1 2 3)"
  echo '}'
  echo 'opset_import { domain: "" version: 17 }'
} | encode >tests/data/grad_cases/if_branch.onnx

# Two layers; their LayerNorms share ln.weight (ones) and ln.bias (zeros), the MatMuls do not.
{
  echo 'ir_version: 8'
  echo 'producer_name: "make_proto_models"'
  echo 'graph {'
  for l in 0 1; do
    in=$([[ $l == 0 ]] && echo x || echo m0)
    echo "  node { input: \"$in\" input: \"ln.weight\" input: \"ln.bias\" output: \"a$l\""
    echo "    name: \"/h.$l/ln/LayerNormalization\" op_type: \"LayerNormalization\" }"
    echo "  node { input: \"a$l\" input: \"h.$l.fc.weight\" output: \"m$l\" name: \"/h.$l/fc/MatMul\" op_type: \"MatMul\" }"
  done
  echo '  node { input: "m1" output: "loss" name: "/loss/ReduceSum" op_type: "ReduceSum"'
  echo '    attribute { name: "keepdims" type: INT i: 0 } }'
  echo '  name: "tied_layernorm"'
  tensor ln.weight 4 -- 1 1 1 1
  tensor ln.bias 4 -- 0 0 0 0
  # shellcheck disable=SC2046
  tensor h.0.fc.weight 4 4 -- $(values 16 1)
  # shellcheck disable=SC2046
  tensor h.1.fc.weight 4 4 -- $(values 16 2)
  echo "  input $(value x 1 2 4)"
  echo "  output $(value loss 1)"
  echo '}'
  echo 'opset_import { domain: "" version: 17 }'
} | encode >tests/data/grad_cases/tied_layernorm.onnx

{
  echo 'ir_version: 8'
  echo 'producer_name: "make_proto_models"'
  echo 'graph {'
  echo '  node { input: "x" input: "fc1.weight" input: "fc1.bias" output: "h" name: "/fc1/Gemm" op_type: "Gemm"'
  echo '    attribute { name: "transB" type: INT i: 1 } }'
  echo '  node { input: "h" output: "r" name: "/relu/Relu" op_type: "Relu" }'
  echo '  node { input: "r" input: "fc2.weight" input: "fc2.bias" output: "logits" name: "/fc2/Gemm" op_type: "Gemm"'
  echo '    attribute { name: "transB" type: INT i: 1 } }'
  echo '  node { input: "logits" input: "labels" output: "loss" name: "/loss/SoftmaxCrossEntropyLoss"'
  echo '    op_type: "SoftmaxCrossEntropyLoss" attribute { name: "reduction" type: STRING s: "mean" } }'
  echo '  name: "relu_mlp"'
  # shellcheck disable=SC2046
  tensor fc1.weight 16 8 -- $(values 128 3)
  # shellcheck disable=SC2046
  tensor fc1.bias 16 -- $(values 16 4)
  # shellcheck disable=SC2046
  tensor fc2.weight 4 16 -- $(values 64 5)
  # shellcheck disable=SC2046
  tensor fc2.bias 4 -- $(values 4 6)
  echo "  input $(value x 1 batch 8)"
  echo "  input $(value labels 7 batch)"
  echo "  output $(value loss 1)"
  echo '}'
  echo 'opset_import { domain: "" version: 17 }'
} | encode >tests/data/grad_cases/relu_mlp.onnx

mkdir -p tests/data/run
encode >tests/data/run/huge_input.onnx <<'EOF_MODEL'
ir_version: 8
opset_import { domain: "" version: 17 }
graph {
  name: "huge_alloc"
  node { input: "x" output: "y" name: "r" op_type: "Relu" }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1048576 } dim { dim_value: 1048576 } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1048576 } dim { dim_value: 1048576 } } } } }
}
EOF_MODEL
encode >tests/data/run/sym_relu.onnx <<'EOF_MODEL'
ir_version: 8
opset_import { domain: "" version: 17 }
graph {
  name: "sym_relu"
  node { input: "x" output: "h" name: "r1" op_type: "Relu" }
  node { input: "h" output: "y" name: "r2" op_type: "Relu" }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_param: "batch" } dim { dim_param: "seq" } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 shape { dim { dim_param: "batch" } dim { dim_param: "seq" } } } } }
}
EOF_MODEL
encode >tests/data/run/unknown_size.onnx <<'EOF_MODEL'
ir_version: 8
opset_import { domain: "" version: 17 }
opset_import { domain: "custom.ops" version: 1 }
graph {
  name: "unsized"
  node { input: "x" output: "h" name: "mystery" op_type: "Mystery" domain: "custom.ops" }
  node { input: "h" output: "y" name: "r" op_type: "Relu" }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } dim { dim_value: 3 } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 } } }
}
EOF_MODEL

# A 2-D Conv whose pads has 2 entries (it takes 4), as a dynamo export once wrote it: every
# subcommand rejects it on load with the same error.
{
  echo 'ir_version: 8'
  echo 'producer_name: "make_proto_models"'
  echo 'graph {'
  echo '  node { input: "x" input: "w" output: "c" name: "/conv/Conv" op_type: "Conv"'
  echo '    attribute { name: "pads" type: INTS ints: 1 ints: 1 } }'
  echo '  node { input: "c" output: "loss" name: "/loss/ReduceSum" op_type: "ReduceSum"'
  echo '    attribute { name: "keepdims" type: INT i: 0 } }'
  echo '  name: "conv_pads_2d"'
  tensor w 3 2 3 3 -- $(values 54 3)
  echo "  input $(value x 1 1 2 5 5)"
  echo "  output $(value loss 1)"
  echo '}'
  echo 'opset_import { domain: "" version: 17 }'
} | encode >tests/data/bad/conv_pads_2d.onnx

# A training graph whose level-1 plan raises the peak (+49.9%): recomputing the small stashed
# Slice s keeps its 4 KiB static input e (read as it is, not recomputed) from the forward pass to
# the backward one, past the forward peak of f. plan and apply warn.
int64s() {  # name values...: a Constant node's int64 tensor value
  local name=$1; shift
  printf '  node { output: "%s" name: "%s" op_type: "Constant" attribute { name: "value" type: TENSOR t { data_type: 7 dims: %s' "$name" "$name" "$#"
  for v in "$@"; do printf ' int64_data: %s' "$v"; done
  printf ' } } }\n'
}
{
  echo 'ir_version: 8'
  echo 'producer_name: "make_proto_models"'
  echo 'graph {'
  int64s shape 256 4
  int64s shape2 512 4
  int64s starts 0
  int64s ends 1
  echo '  node { input: "x" input: "shape" output: "e" name: "expand_e" op_type: "Expand" }'
  echo '  node { input: "e" input: "starts" input: "ends" input: "starts" output: "s" name: "slice" op_type: "Slice" }'
  echo '  node { input: "s" input: "shape2" output: "f" name: "expand_f" op_type: "Expand" }'
  echo '  node { input: "f" output: "r" name: "sum_f" op_type: "ReduceSum" attribute { name: "keepdims" type: INT i: 0 } }'
  echo '  node { input: "s" input: "r" output: "y" output: "yr" name: "yield" op_type: "YieldOp" domain: "com.microsoft"'
  echo '    attribute { name: "full_shape_outputs" type: INTS ints: 0 ints: 1 } }'
  echo '  node { input: "y" input: "s" output: "g1" name: "grad_mul" op_type: "Mul" }'
  echo '  node { input: "g1" input: "yr" output: "g2" name: "grad_scale" op_type: "Mul" }'
  echo '  node { input: "g2" output: "gx" name: "grad_sum" op_type: "ReduceSum"'
  echo '    attribute { name: "keepdims" type: INT i: 0 } attribute { name: "axes" type: INTS ints: 0 } }'
  echo '  name: "peak_raising_level1"'
  echo "  input $(value x 1 4)"
  echo "  output $(value gx 1 4)"
  echo '}'
  echo 'opset_import { domain: "" version: 15 }'
  echo 'opset_import { domain: "com.microsoft" version: 1 }'
} | encode >tests/data/plan/peak_raising_level1.onnx

echo "wrote tests/data/bad/conv_pads_2d.onnx tests/data/plan/peak_raising_level1.onnx"
echo "wrote tests/data/versions/{ir14_opset23,opset99}.onnx tests/data/grad_cases/{if_branch,tied_layernorm,relu_mlp}.onnx"
echo "wrote tests/data/run/{huge_input,sym_relu,unknown_size}.onnx"
if [[ -x $memopt ]]; then
  "$memopt" grad tests/data/grad_cases/relu_mlp.onnx -o tests/data/plan/relu_mlp_train.onnx
else
  echo "no memopt binary at $memopt: tests/data/plan/relu_mlp_train.onnx not rewritten" >&2
fi
