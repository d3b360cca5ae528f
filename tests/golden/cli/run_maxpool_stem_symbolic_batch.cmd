run @SRC@/tests/data/run/maxpool_stem_train.onnx --dims batch=4
