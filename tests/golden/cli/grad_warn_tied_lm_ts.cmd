grad @SRC@/tests/data/grad_cases/tied_lm_ts.onnx -o @WORK@/train.onnx
