bench @DATA@/ort_training_api/training_model.onnx --device tpu --dims input-0_dim0=8,input-0_dim1=784,output-0_dim0=8
