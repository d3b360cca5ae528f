apply @SRC@/tests/data/plan/convnet_residual_train.onnx --ops extended --config @SRC@/tests/data/configs/private_chains_convnet_residual.json -o @WORK@/ck.onnx --verify
