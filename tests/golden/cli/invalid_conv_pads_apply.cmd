apply @SRC@/tests/data/bad/conv_pads_2d.onnx --boundary /conv/Conv --config @SRC@/tests/data/configs/gelu.json -o @WORK@/out.onnx --verify
