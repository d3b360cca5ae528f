run @DATA@/onnx_node_tests/node/test_add/model.onnx --inputs @DATA@/onnx_node_tests/node/test_add/test_data_set_0
