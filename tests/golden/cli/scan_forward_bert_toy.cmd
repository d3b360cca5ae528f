scan @DATA@/forward/bert_toy_optimized.onnx --dims batch=4,max_seq_len_in_batch=128
