scan @DATA@/ort_training_api/training_model.onnx --dims input-0_dim0=8,input-0_dim1=784,output-0_dim0=8
