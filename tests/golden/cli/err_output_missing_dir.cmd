scan @DATA@/ort_recompute/recompute_gelu.onnx -o @WORK@/missing_dir/out.txt
