plan @SRC@/tests/data/plan/tanh_mlp_train.onnx --budget 0.7 --checkpoints maybe
