apply @DATA@/ort_training_api/training_model.onnx --config @SRC@/tests/data/configs/gelu.json --dims input-0_dim0=8,input-0_dim1=784,output-0_dim0=8 -o @WORK@/out.onnx
