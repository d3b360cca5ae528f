grad @SRC@/tests/data/grad_cases/if_branch.onnx -o @WORK@/train.onnx
