grad @SRC@/tests/data/bad/conv_pads_2d.onnx -o @WORK@/train.onnx
