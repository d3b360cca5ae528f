apply @SRC@/tests/data/plan/convnet_bn_train.onnx --config Conv+:1:-1 --dims batch=4 -o @WORK@/convnet_rw.onnx
