plan @SRC@/tests/data/plan/convnet_bn_train.onnx --ops extended --budget 0.8 --dims batch=4 -o @WORK@/mem_opt.json
