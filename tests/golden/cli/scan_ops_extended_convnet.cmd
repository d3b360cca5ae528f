scan @SRC@/tests/data/plan/convnet_bn_train.onnx --ops extended --dims batch=4
