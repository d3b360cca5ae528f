scan @DATA@/forward/TFBertForQuestionAnswering.onnx --format csv
