sacn model.onnx
