scan @SRC@/tests/data/torch_exports/t5_ts/model.onnx
