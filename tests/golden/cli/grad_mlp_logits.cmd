grad @SRC@/tests/data/grad_fixtures/mlp_logits/model.onnx -o @WORK@/train.onnx --list
