scan @SRC@/tests/data/torch_exports/t5_ts/model.onnx --dims batch=2,src_len=8,tgt_len=6
