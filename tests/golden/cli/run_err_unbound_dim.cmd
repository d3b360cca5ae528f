run @DATA@/ort_training_api/training_model.onnx --dims input-0_dim0=8
