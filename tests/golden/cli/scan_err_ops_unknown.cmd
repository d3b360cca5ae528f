scan @SRC@/tests/data/plan/convnet_bn_train.onnx --ops all
