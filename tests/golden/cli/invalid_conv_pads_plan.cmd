plan @SRC@/tests/data/bad/conv_pads_2d.onnx --boundary /conv/Conv --level 1
