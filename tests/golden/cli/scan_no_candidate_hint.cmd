scan @SRC@/tests/data/plan/relu_mlp_train.onnx --dims batch=4
