scan @SRC@/tests/data/bad/dup_producer.onnx
