run @SRC@/tests/data/run/sym_relu.onnx --dims batch=2,seq=3 --output-grads zeros
