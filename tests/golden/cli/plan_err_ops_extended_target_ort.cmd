plan @SRC@/tests/data/plan/convnet_bn_train.onnx --ops extended --target ort --budget 0.8 --dims batch=4
