scan @DATA@/ort_recompute/recompute_tile.onnx --show Expand+Tile+ --dot -
