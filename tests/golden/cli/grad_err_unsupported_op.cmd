grad @SRC@/tests/data/grad_fixtures/unsupported_hardswish/model.onnx -o @WORK@/train.onnx
