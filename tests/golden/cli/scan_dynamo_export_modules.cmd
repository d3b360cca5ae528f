scan @SRC@/tests/data/torch_exports/llama_dynamo/model.onnx
