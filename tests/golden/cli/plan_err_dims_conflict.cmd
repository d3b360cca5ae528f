plan @DATA@/ort_training_api/training_model.onnx --level 1 --dims input-0_dim0=8,input-0_dim1=100,output-0_dim0=8
