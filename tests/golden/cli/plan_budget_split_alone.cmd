plan @SRC@/tests/data/plan/tanh_mlp_train.onnx --ops extended --budget 251348 --format json
