grad @SRC@/tests/data/grad_fixtures/cnn_tiny/model.onnx
