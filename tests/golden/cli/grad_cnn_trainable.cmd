grad @SRC@/tests/data/grad_fixtures/cnn_tiny/model.onnx -o @WORK@/train.onnx --trainable "^(stem|fc)\." --list
