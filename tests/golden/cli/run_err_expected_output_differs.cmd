run @DATA@/onnx_node_tests/node/test_softmax_axis_1/model.onnx --inputs @DATA@/onnx_node_tests/node/test_softmax_axis_1/test_data_set_0 --rtol 0 --atol 0
