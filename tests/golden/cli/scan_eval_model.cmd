scan @DATA@/ort_training_api/eval_model.onnx
