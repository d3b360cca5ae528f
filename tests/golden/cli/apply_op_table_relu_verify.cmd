apply @SRC@/tests/data/plan/relu_mlp_train.onnx --config Gemm+Relu+:1:-1 --op-table @SRC@/tests/data/configs/relu_op_table.json --dims batch=4 -o @WORK@/relu_rw.onnx --verify
