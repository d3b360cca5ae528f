plan @SRC@/tests/data/plan/relu_mlp_train.onnx --level 1 --dims batch=4 --op-table @SRC@/tests/data/configs/relu_op_table.json -o @WORK@/mem_opt.json
