run @SRC@/tests/data/bad/conv_pads_2d.onnx
