#!/usr/bin/env python3
"""Regenerates the loader's test inputs: tests/data/bad/*.onnx (models the loader must reject with
a clear message) and tests/data/tiny_external/ (a model with a real external data file that loads).

Run from the repository root:  python3 scripts/make_bad_inputs.py
The outputs are committed; the C++ tests do not need Python. Deterministic (fixed seed).
"""
import os
import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAD = os.path.join(ROOT, "tests", "data", "bad")
TINY = os.path.join(ROOT, "tests", "data", "tiny_external")

IR_VERSION = 8
OPSETS = [helper.make_opsetid("", 15)]


def model(graph):
    m = helper.make_model(graph, opset_imports=OPSETS, producer_name="make_bad_inputs")
    m.ir_version = IR_VERSION
    return m


def save(m, name, folder=BAD):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(m.SerializeToString())


def tiny_mlp():
    """x[batch,4] -> Gemm(4x3) -> Relu -> Gemm(3x2) -> y[batch,2]; weights inline."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(np.zeros(3, np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal((3, 2)).astype(np.float32), "w2")
    b2 = numpy_helper.from_array(np.zeros(2, np.float32), "b2")
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="Gemm_0"),
        helper.make_node("Relu", ["h"], ["r"], name="Relu_1"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], name="Gemm_2"),
    ]
    g = helper.make_graph(
        nodes, "tiny_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
        [w1, b1, w2, b2])
    return model(g)


def external_tensor(name, dims, location, offset=0, length=None):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    entries = [("location", location), ("offset", str(offset))]
    if length is not None:
        entries.append(("length", str(length)))
    for k, v in entries:
        e = t.external_data.add()
        e.key = k
        e.value = v
    return t


def relu_model(initializer):
    g = helper.make_graph(
        [helper.make_node("Add", ["x", initializer.name], ["y"], name="Add_0")], "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1000])],
        [initializer])
    return model(g)


def main():
    os.makedirs(BAD, exist_ok=True)
    os.makedirs(TINY, exist_ok=True)

    open(os.path.join(BAD, "empty.onnx"), "wb").close()

    rnd = random.Random(1234)
    with open(os.path.join(BAD, "random.onnx"), "wb") as f:
        f.write(bytes(rnd.getrandbits(8) for _ in range(512)))

    good = tiny_mlp().SerializeToString()
    with open(os.path.join(BAD, "truncated.onnx"), "wb") as f:
        f.write(good[: len(good) // 2])

    # External data: missing file; file shorter than the tensor.
    save(relu_model(external_tensor("w", [1000], "w.bin", 0, 4000)), "missing_external.onnx")
    save(relu_model(external_tensor("w", [1000], "short_external.bin", 0, 4000)), "short_external.onnx")
    with open(os.path.join(BAD, "short_external.bin"), "wb") as f:
        f.write(bytes(100))

    # Two producers of one tensor name.
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["t"], name="a"),
         helper.make_node("Mul", ["x", "x"], ["t"], name="b"),
         helper.make_node("Relu", ["t"], ["y"], name="c")],
        "dup", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    save(model(g), "dup_producer.onnx")

    # A node input nobody provides.
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "ghost"], ["y"], name="a")],
        "dangling", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    save(model(g), "dangling_input.onnx")

    # raw_data of 8 bytes for a float[3] (needs 12).
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.append(3)
    w.raw_data = bytes(8)
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="a")],
        "bad_raw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], [w])
    save(model(g), "bad_raw_size.onnx")

    # A model whose weights live in a real external file, next to it.
    data = np.arange(1000, dtype=np.float32)
    with open(os.path.join(TINY, "weights.bin"), "wb") as f:
        f.write(bytes(64))  # a header-like gap, so the offset is not 0
        f.write(data.tobytes())
    save(relu_model(external_tensor("w", [1000], "weights.bin", 64, 4000)), "model.onnx", TINY)

    # Structure and header errors: a cycle, an ir_version before 3, a negative opset, a duplicated input.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    g = helper.make_graph([helper.make_node("Relu", ["b"], ["a"], name="r1"),
                           helper.make_node("Relu", ["a"], ["b"], name="r2"),
                           helper.make_node("Add", ["a", "x"], ["y"], name="add")], "cyclic", [x], [y])
    save(model(g), "cyclic.onnx")
    relu = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g", [x], [y])
    # (Newer ir_versions and opsets than memopt knows load with a warning:
    # scripts/make_version_models.sh writes those.)
    m = helper.make_model(relu, opset_imports=[helper.make_opsetid("", 15)])
    m.ir_version = 2
    save(m, "bad_ir_version.onnx")
    m = helper.make_model(relu, opset_imports=[helper.make_opsetid("", -1)])
    m.ir_version = 8
    save(m, "negative_opset.onnx")
    dup = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "g", [x, x], [y])
    save(model(dup), "duplicate_input.onnx")

    # Declared dims whose byte count overflows 64 bits: float[2^40, 2^40] (2^82 bytes).
    big = [1 << 40, 1 << 40]
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "huge",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, big)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, big)])
    save(model(g), "huge_dims.onnx")

    # A declared output dim that --dims batch=8 contradicts: Relu(x[batch, 4]) declared [3, 4].
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "pinned",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
    save(model(g), "dims_pinned.onnx")

    for m in ["dup_producer.onnx", "dangling_input.onnx", "bad_raw_size.onnx"]:
        onnx.load(os.path.join(BAD, m))  # they are well-formed protobufs
    onnx.checker.check_model(os.path.join(TINY, "model.onnx"))


if __name__ == "__main__":
    main()
