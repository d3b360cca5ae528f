bench @SRC@/tests/data/bad/conv_pads_2d.onnx --device cpu --iters 1
