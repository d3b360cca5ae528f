scan @DATA@/ort_recompute/3layer_bloom_optimized_training.onnx --dims inputs_input_ids_dim0=8,inputs_attention_mask_dim1=512,inputs_attention_mask_dim0=8,inputs_labels_dim0=8,inputs_labels_dim1=512
