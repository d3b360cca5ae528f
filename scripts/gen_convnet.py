#!/usr/bin/env python3
"""Writes a small ResNet-style ConvNet (forward only, as torch.onnx.export writes one in training
mode) for the extended-op budget tests: tests/data/plan/convnet_bn.onnx.

    python3 scripts/gen_convnet.py --out tests/data/plan/convnet_bn.onnx [--blocks 3 --channels 8 --size 8]

images [batch, 3, S, S] -> Conv 3x3 + BatchNormalization (training_mode=1) + Relu, then `blocks`
residual blocks (Conv-BN-Relu-Conv-BN, Add, Relu) at the same resolution, GlobalAveragePool,
Flatten, Gemm and SoftmaxCrossEntropyLoss with labels [batch]. Weights are seeded random
initializers (numpy), so `memopt grad` turns it into a training graph the CPU executor runs. The
activations of every block have the same size, so the training step's peak is at the start of the
backward pass, where recomputing Conv/Relu outputs lowers it (the ops of `--ops extended`).
Needs the onnx and numpy packages.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--channels", type=int, default=8)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--classes", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(20261125)
    c, s = args.channels, args.size
    nodes, inits = [], []

    def weight(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv_bn(x, prefix, cin, relu):
        w = weight(prefix + ".conv.weight", (c, cin, 3, 3), (2.0 / (cin * 9)) ** 0.5)
        y = prefix + "/conv_out"
        nodes.append(helper.make_node("Conv", [x, w], [y], name=prefix + "/Conv", pads=[1, 1, 1, 1],
                                      kernel_shape=[3, 3]))
        gamma = weight(prefix + ".bn.weight", (c,), 0.1)
        inits[-1] = numpy_helper.from_array(1 + numpy_helper.to_array(inits[-1]), gamma)
        beta = weight(prefix + ".bn.bias", (c,), 0.1)
        inits.append(numpy_helper.from_array(np.zeros(c, np.float32), prefix + ".bn.running_mean"))
        inits.append(numpy_helper.from_array(np.ones(c, np.float32), prefix + ".bn.running_var"))
        z = prefix + "/bn_out"
        nodes.append(helper.make_node(
            "BatchNormalization", [y, gamma, beta, prefix + ".bn.running_mean", prefix + ".bn.running_var"],
            [z, prefix + "/bn_running_mean", prefix + "/bn_running_var"], name=prefix + "/BatchNormalization",
            epsilon=1e-5, momentum=0.9, training_mode=1))
        if not relu:
            return z
        r = prefix + "/relu_out"
        nodes.append(helper.make_node("Relu", [z], [r], name=prefix + "/Relu"))
        return r

    x = conv_bn("images", "stem", 3, True)
    for b in range(args.blocks):
        p = "block%d" % b
        h = conv_bn(x, p + ".a", c, True)
        h = conv_bn(h, p + ".b", c, False)
        a = p + "/add_out"
        nodes.append(helper.make_node("Add", [x, h], [a], name=p + "/Add"))
        x = p + "/out"
        nodes.append(helper.make_node("Relu", [a], [x], name=p + "/Relu"))
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="/Flatten", axis=1))
    fw = weight("fc.weight", (args.classes, c), (1.0 / c) ** 0.5)
    fb = weight("fc.bias", (args.classes,), 0.01)
    nodes.append(helper.make_node("Gemm", ["flat", fw, fb], ["logits"], name="/fc/Gemm", transB=1))
    nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"], name="/loss"))
    graph = helper.make_graph(
        nodes, "convnet_bn",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch", 3, s, s]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, ["batch"])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="memopt gen_convnet.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, args.out)


if __name__ == "__main__":
    main()
