scan @SRC@/tests/data/run/sym_relu.onnx --dims batch=9223372036854775807,seq=9223372036854775807 --fail-above 3GiB
