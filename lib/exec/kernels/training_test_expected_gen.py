#!/usr/bin/env python3
"""Generates training_test_expected.h: reference values for the training kernel tests.

Independent references only: ONNX Runtime (CPU, inference build) for the forward ops, central
finite differences of ORT forward ops (float64) for the gradients, exact adjoints (J^T dY from unit
inputs) for the linear ops that ORT only runs in float32, and plain numpy indexing for the
scatter/slice gradients. The C++ tests read the generated header and never need Python.

Run:  python3 lib/exec/kernels/training_test_expected_gen.py > lib/exec/kernels/training_test_expected.h
"""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

rng = np.random.default_rng(20240611)
out_lines = []


def emit(name, arr):
    a = np.asarray(arr, dtype=np.float64).ravel()
    body = ", ".join("%.17g" % v for v in a)
    out_lines.append("inline const std::vector<double> %s = {%s};" % (name, body))


def run(nodes, inputs, outputs, opset=17):
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for k, v in inputs.items()]
    outs = [onnx.ValueInfoProto(name=k) for k in outputs]
    g = helper.make_graph(nodes, "g", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)],
                          ir_version=8)
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, inputs)


def fd_grad(f, inputs, key, dy, h=1e-6):
    """d/d inputs[key] of sum(f(inputs) * dy) by central differences (float64)."""
    x = inputs[key]
    g = np.zeros_like(x)
    flat = x.ravel()
    for i in range(flat.size):
        save = flat[i]
        flat[i] = save + h
        fp = np.sum(f(inputs) * dy)
        flat[i] = save - h
        fm = np.sum(f(inputs) * dy)
        flat[i] = save
        g.ravel()[i] = (fp - fm) / (2 * h)
    return g


def adjoint(f, x_shape, dy, dtype=np.float32):
    """J^T dy for a linear f, from f(e_j) on unit inputs (exact up to float32 rounding)."""
    n = int(np.prod(x_shape))
    g = np.zeros(n)
    for j in range(n):
        e = np.zeros(n, dtype=dtype)
        e[j] = 1
        g[j] = np.sum(f(e.reshape(x_shape)).astype(np.float64) * dy)
    return g.reshape(x_shape)


# --- Activations: ORT forward values (float32). ---
act_x = np.linspace(-4, 4, 12).astype(np.float32).reshape(3, 4)
act_b = np.array([0.5, -1.0, 0.25, 2.0], np.float32)
emit("kActX", act_x)
emit("kActBias", act_b)
ms = "com.microsoft"
emit("kGeluY", run([helper.make_node("Gelu", ["x"], ["y"], domain=ms)], {"x": act_x}, ["y"])[0])
emit("kBiasGeluY", run([helper.make_node("BiasGelu", ["x", "b"], ["y"], domain=ms)], {"x": act_x, "b": act_b}, ["y"])[0])
emit("kFastGeluY", run([helper.make_node("FastGelu", ["x"], ["y"], domain=ms)], {"x": act_x}, ["y"])[0])
emit("kFastGeluBiasY",
     run([helper.make_node("FastGelu", ["x", "b"], ["y"], domain=ms)], {"x": act_x, "b": act_b}, ["y"])[0])
emit("kQuickGeluY", run([helper.make_node("QuickGelu", ["x"], ["y"], domain=ms)], {"x": act_x}, ["y"])[0])
emit("kQuickGeluAlpha1Y",
     run([helper.make_node("QuickGelu", ["x"], ["y"], domain=ms, alpha=1.0)], {"x": act_x}, ["y"])[0])

# --- FastGelu / QuickGelu gradients: FD of the ORT float64 forward. ---
gx = act_x.astype(np.float64)
gdy = rng.standard_normal(gx.shape)
emit("kActDy", gdy)
emit("kFastGeluGradFd", fd_grad(lambda d: run([helper.make_node("FastGelu", ["x"], ["y"], domain=ms)], d, ["y"])[0],
                                {"x": gx.copy()}, "x", gdy))
emit("kQuickGeluGradFd", fd_grad(lambda d: run([helper.make_node("QuickGelu", ["x"], ["y"], domain=ms)], d, ["y"])[0],
                                 {"x": gx.copy()}, "x", gdy))

# --- Softmax / LogSoftmax gradients on [2,3,4]. ---
sx = rng.standard_normal((2, 3, 4))
sdy = rng.standard_normal((2, 3, 4))
emit("kSmX", sx)
emit("kSmDy", sdy)
for op, prefix in (("Softmax", "kSm"), ("LogSoftmax", "kLsm")):
    for opset, axis, tag in ((11, 1, "11Axis1"), (13, 1, "13Axis1"), (13, -1, "13AxisM1")):
        f = lambda d, op=op, opset=opset, axis=axis: run([helper.make_node(op, ["x"], ["y"], axis=axis)], d, ["y"],
                                                        opset=opset)[0]
        emit(prefix + "Y" + tag, f({"x": sx}))
        emit(prefix + "Dx" + tag, fd_grad(f, {"x": sx.copy()}, "x", sdy))

# --- LayerNormalization gradient: x [2,3,4], axis -1 and 1. ---
lx = rng.standard_normal((2, 3, 4)) * 2 + 0.5
ldy = rng.standard_normal((2, 3, 4))
emit("kLnX", lx)
emit("kLnDy", ldy)
for axis, tag in ((-1, "AxisM1"), (1, "Axis1")):
    norm_shape = lx.shape[axis:] if axis != -1 else lx.shape[-1:]
    scale = rng.standard_normal(norm_shape)
    bias = rng.standard_normal(norm_shape)
    node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y", "m", "i"], axis=axis, epsilon=1e-5)
    y, mean, inv = run([node], {"x": lx, "s": scale, "b": bias}, ["y", "m", "i"])
    f = lambda d: run([helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=axis, epsilon=1e-5)], d,
                      ["y"])[0]
    feeds = {"x": lx.copy(), "s": scale.copy(), "b": bias.copy()}
    emit("kLnScale" + tag, scale)
    emit("kLnBias" + tag, bias)
    emit("kLnY" + tag, y)
    emit("kLnMean" + tag, mean)
    emit("kLnInvStd" + tag, inv)
    emit("kLnDx" + tag, fd_grad(f, feeds, "x", ldy))
    emit("kLnDscale" + tag, fd_grad(f, feeds, "s", ldy))
    emit("kLnDbias" + tag, fd_grad(f, feeds, "b", ldy))

# --- SimplifiedLayerNormalization gradient, axis -1. ---
sscale = rng.standard_normal(4)
node = helper.make_node("SimplifiedLayerNormalization", ["x", "s"], ["y", "i"], axis=-1, epsilon=1e-5)
_, sinv = run([node], {"x": lx, "s": sscale}, ["y", "i"])
f = lambda d: run([helper.make_node("SimplifiedLayerNormalization", ["x", "s"], ["y"], axis=-1, epsilon=1e-5)], d,
                  ["y"])[0]
emit("kSlnScale", sscale)
emit("kSlnInvStd", sinv)
emit("kSlnDx", fd_grad(f, {"x": lx.copy(), "s": sscale.copy()}, "x", ldy))
emit("kSlnDscale", fd_grad(f, {"x": lx.copy(), "s": sscale.copy()}, "s", ldy))

# --- BatchNormalization (training mode) gradient: x [2,3,2]. ---
bx = rng.standard_normal((2, 3, 2)) * 1.5
bdy = rng.standard_normal((2, 3, 2))
bscale = rng.standard_normal(3)
bbias = rng.standard_normal(3)
eps = 1e-5
bmean = bx.mean(axis=(0, 2))
binv = 1 / np.sqrt(bx.var(axis=(0, 2)) + eps)
f = lambda d: run([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                                    training_mode=1, epsilon=eps)], d, ["y", "rm", "rv"], opset=15)[0]
feeds = {"x": bx.copy(), "s": bscale.copy(), "b": bbias.copy(), "m": np.zeros(3), "v": np.ones(3)}
emit("kBnX", bx)
emit("kBnDy", bdy)
emit("kBnScale", bscale)
emit("kBnMean", bmean)
emit("kBnInvStd", binv)
emit("kBnDx", fd_grad(f, feeds, "x", bdy))
emit("kBnDscale", fd_grad(f, feeds, "s", bdy))
emit("kBnDbias", fd_grad(f, feeds, "b", bdy))

# --- SoftmaxCrossEntropyLoss gradients. ---
cx = rng.standard_normal((3, 4))
clab = np.array([1, 3, 0], np.int64)
cw = np.array([0.5, 2.0, 1.0, 1.5])
emit("kSceLogits", cx)
emit("kSceLabels", clab)
emit("kSceWeight", cw)
for red, tag in (("mean", "Mean"), ("sum", "Sum"), ("none", "None")):
    for use_w, wtag in ((False, ""), (True, "W")):
        for ign, itag in ((None, ""), (3, "Ign")):
            attrs = {"reduction": red}
            if ign is not None:
                attrs["ignore_index"] = ign
            names = ["x", "l"] + (["w"] if use_w else [])
            node = helper.make_node("SoftmaxCrossEntropyLoss", names, ["y", "lp"], **attrs)
            feeds = {"x": cx.copy(), "l": clab}
            if use_w:
                feeds["w"] = cw
            _, lp = run([node], feeds, ["y", "lp"], opset=13)
            dy = np.array(0.75) if red != "none" else rng.standard_normal(3)
            f = lambda d, names=names, attrs=attrs: run(
                [helper.make_node("SoftmaxCrossEntropyLoss", names, ["y"], **attrs)], d, ["y"], opset=13)[0]
            emit("kSceLogProb", lp) if (red, use_w, ign) == ("mean", False, None) else None
            emit("kSceDy" + tag + wtag + itag, dy)
            emit("kSceDx" + tag + wtag + itag, fd_grad(f, feeds, "x", dy))
# [N, C, D] layout: logits [2,3,2], labels [2,2], mean with weights.
cx3 = rng.standard_normal((2, 3, 2))
clab3 = np.array([[0, 2], [1, 1]], np.int64)
cw3 = np.array([1.0, 0.5, 2.0])
node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "l", "w"], ["y", "lp"], reduction="mean")
_, lp3 = run([node], {"x": cx3, "l": clab3, "w": cw3}, ["y", "lp"], opset=13)
f = lambda d: run([helper.make_node("SoftmaxCrossEntropyLoss", ["x", "l", "w"], ["y"], reduction="mean")], d, ["y"],
                  opset=13)[0]
emit("kSce3LogProb", lp3)
emit("kSce3Labels", clab3)
emit("kSce3Weight", cw3)
emit("kSce3Dx", fd_grad(f, {"x": cx3.copy(), "l": clab3, "w": cw3}, "x", np.array(1.25)))

# --- MaxPool gradient: x [1,2,5,5], kernel 2, stride 2 (windows do not tile 5x5). ---
mx = rng.standard_normal((1, 2, 5, 5))
mdy = rng.standard_normal((1, 2, 2, 2))
node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2])
_, midx = run([node], {"x": mx}, ["y", "i"], opset=12)
f = lambda d: run([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])], d, ["y"],
                  opset=12)[0]
emit("kMpIndices", midx)
emit("kMpDy", mdy)
emit("kMpDx", fd_grad(f, {"x": mx.copy()}, "x", mdy))

# --- AveragePool gradient (linear: exact adjoint), x [1,1,5,5], kernel 3, stride 2, pads 1. ---
for cip in (0, 1):
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                            count_include_pad=cip)
    f = lambda x, node=node: run([node], {"x": x}, ["y"], opset=12)[0]
    ady = rng.standard_normal((1, 1, 3, 3))
    emit("kApDy%d" % cip, ady)
    emit("kApDx%d" % cip, adjoint(f, (1, 1, 5, 5), ady))

# --- ConvGrad (linear in X and in W: exact adjoints); X [1,4,4,4], W [2,2,2,2], group 2, pads 1, stride 2. ---
cvx = rng.standard_normal((1, 4, 4, 4)).astype(np.float32)
cvw = rng.standard_normal((2, 2, 2, 2)).astype(np.float32)
cnode = helper.make_node("Conv", ["x", "w"], ["y"], group=2, pads=[1, 1, 0, 0], strides=[2, 1], dilations=[1, 2])
cy = run([cnode], {"x": cvx, "w": cvw}, ["y"], opset=13)[0]
cdy = rng.standard_normal(cy.shape)
emit("kConvX", cvx)
emit("kConvW", cvw)
emit("kConvDyShape", cy.shape)
emit("kConvDy", cdy)
emit("kConvDx", adjoint(lambda x: run([cnode], {"x": x, "w": cvw}, ["y"], opset=13)[0], cvx.shape, cdy))
emit("kConvDw", adjoint(lambda w: run([cnode], {"x": cvx, "w": w}, ["y"], opset=13)[0], cvw.shape, cdy))
emit("kConvDb", cdy.sum(axis=(0, 2, 3)))

# --- Scatter/slice gradients: numpy. ---
gdy2 = rng.standard_normal((2, 4, 3))  # Gather of [2,5,3] on axis 1 with indices [[0, 4], [-1, 0]]
gidx = np.array([[0, 4], [-1, 0]])
gdx = np.zeros((2, 5, 3))
np.add.at(gdx, (slice(None), gidx.ravel() % 5, slice(None)), gdy2.reshape(2, 4, 3))
emit("kGgDy", gdy2)
emit("kGgDx", gdx)
sdy2 = rng.standard_normal((3, 2, 2))  # x[4:0:-2... see below]
ref = np.zeros((4, 5, 6))
ref[3:0:-1, 1:5:2, -2:] = sdy2  # starts [3,1,-2] ends [0,5,big] axes [0,1,2] steps [-1,2,1]
emit("kSgDy", sdy2)
emit("kSgDx", ref)

print("// Generated by training_test_expected_gen.py (ONNX Runtime %s, numpy %s); do not edit." %
      (ort.__version__, np.__version__))
print("// Reference values for the training kernel tests; see the generator for how each was made.")
print("#pragma once\n\n#include <vector>\n\nnamespace memopt::testing::expected {\n")
print("\n".join(out_lines))
print("\n}  // namespace memopt::testing::expected")
