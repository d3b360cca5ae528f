#!/usr/bin/env python3
"""Writes a synthetic ORTModule-style TRAINING graph of a GPT-2-like transformer.

The graph mimics what ONNX Runtime's ORTModule hands to its memory optimizer (compare
../shared/data/ort_recompute/3layer_bloom_optimized_training.onnx): user inputs first, then every
weight as a GRAPH INPUT without data (so the file stays small), a forward pass, the loss
(com.microsoft SoftmaxCrossEntropyLossInternal), one com.microsoft YieldOp, and a backward pass built
the way ORT's gradient builder builds it (FusedMatMul, Gemm on 2-D reshapes for weight gradients,
ReduceSum for bias gradients, GeluGrad, SoftmaxGrad_13, LayerNormalizationGrad, Sum accumulation).
Graph outputs: the loss and `<weight>_grad` for every weight, in weight order.

Only the structure matters (it is a benchmark and analysis input); running it through onnxruntime
is not a goal. Node count grows linearly with --layers (about 75 nodes per layer).

    gen_transformer_training.py --layers 12 --out gpt_12.onnx [--hidden 768 --heads 12 --vocab 50257]
        [--dtype float16|float] [--batch-dim batch --seq-dim seq_len] [--check] [--stats]
"""

import argparse
import collections
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
OPSET = 15
IR_VERSION = 8
LN_EPS = 1e-5
DTYPES = {"float16": (TensorProto.FLOAT16, np.float16), "float": (TensorProto.FLOAT, np.float32)}


class GraphBuilder:
    """Collects nodes, initializers and graph inputs/outputs; names nodes uniquely."""

    def __init__(self, elem, np_dtype):
        self.elem = elem
        self.np_dtype = np_dtype
        self.nodes = []
        self.inits = []
        self.init_names = set()
        self.inputs = []
        self.outputs = []
        self.node_names = set()

    def node(self, op, name, inputs, outputs, domain="", **attrs):
        if name in self.node_names:
            raise ValueError(f"duplicate node name {name}")
        self.node_names.add(name)
        self.nodes.append(helper.make_node(op, list(inputs), list(outputs), name=name, domain=domain, **attrs))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def fwd(self, scope, op, inputs, n_outputs=1, domain="", suffix="", **attrs):
        """A forward node named like the torch exporter: `<scope>/<Op><suffix>` -> `..._output_<i>`."""
        name = f"{scope}/{op}{suffix}"
        outs = [f"{name}_output_{i}" for i in range(n_outputs)]
        return self.node(op, name, inputs, outs, domain, **attrs)

    def const(self, name, values, dtype=np.int64):
        if name not in self.init_names:
            self.init_names.add(name)
            self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def fconst(self, name, value):
        """A scalar of the model's float type."""
        return self.const(name, value, self.np_dtype)

    def graph_input(self, name, elem, shape):
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def graph_output(self, name, elem, shape):
        self.outputs.append(helper.make_tensor_value_info(name, elem, shape))


class GradScope:
    """Emits the gradient nodes of one forward node: `<fwd>_Grad/<Op>_<k>` (ORT's naming)."""

    def __init__(self, b, fwd_name):
        self.b = b
        self.prefix = f"{fwd_name}_Grad"
        self.k = 0

    def __call__(self, op, inputs, outputs, domain="", **attrs):
        name = f"{self.prefix}/{op}_{self.k}"
        self.k += 1
        return self.b.node(op, name, inputs, outputs, domain, **attrs)


def grad(t):
    return f"{t}_grad"


class Gpt2TrainingGraph:
    def __init__(self, args):
        self.a = args
        elem, np_dtype = DTYPES[args.dtype]
        self.b = GraphBuilder(elem, np_dtype)
        self.H, self.A, self.V = args.hidden, args.heads, args.vocab
        if self.H % self.A:
            raise ValueError("--hidden must be a multiple of --heads")
        self.D = self.H // self.A
        self.weights = []  # (name, shape) in graph-input order
        self.tape = []     # forward records, replayed in reverse for the backward pass
        self.grad_weight_nodes = []

    # ---- helpers -----------------------------------------------------------------------------
    def weight(self, name, shape):
        self.weights.append((name, shape))
        return name

    def consts(self):
        b, H = self.b, self.H
        c = {}
        c["heads_shape"] = b.const("const_shape_to_heads", [0, 0, self.A, self.D])
        c["merge_shape"] = b.const("const_shape_merge_heads", [0, 0, H])
        c["split"] = b.const("const_qkv_split", [H, H, H])
        c["bias_axes"] = b.const("const_axes_0_1", [0, 1])
        c["axes0"] = b.const("const_axes_0", [0])
        c["mask_axes"] = b.const("const_axes_1_2", [1, 2])
        c["one_i64"] = b.const("const_index_1", 1)
        c["flat"] = b.const("const_shape_flat", [-1])
        c["ignore"] = b.const("const_ignore_index", -100)
        c["scale"] = b.fconst("const_attn_scale", float(np.sqrt(self.D)))
        c["one"] = b.fconst("const_one", 1.0)
        c["neg"] = b.fconst("const_mask_value", -10000.0)
        return c

    def flat_shape(self, n):
        return self.b.const(f"const_shape_flat_{n}", [-1, n])

    def matmul_weight(self, scope, x, w, bias, k, n):
        """x @ w + bias (GPT-2 Conv1D: w is [k, n]); records both nodes for the backward."""
        mm = self.b.fwd(scope, "MatMul", [x, w])
        out = self.b.fwd(scope, "Add", [mm, bias])
        self.tape.append(("linear", scope, x, w, bias, mm, out, k, n))
        return out

    # ---- forward -----------------------------------------------------------------------------
    def layer_norm(self, scope, x, w, bias):
        name = f"{scope}/LayerNormalization"
        outs = [f"{name}_output_0", f"{name}/saved_mean", f"{name}/saved_inv_std_var"]
        self.b.node("LayerNormalization", name, [x, w, bias], outs, axis=-1, epsilon=LN_EPS, stash_type=1)
        self.tape.append(("ln", name, x, w, bias, outs))
        return outs[0]

    def residual(self, scope, x, y, suffix=""):
        out = self.b.fwd(scope, "Add", [x, y], suffix=suffix)
        self.tape.append(("residual", f"{scope}/Add{suffix}", x, y, out))
        return out

    def attention(self, i, x, c, mask):
        b, H = self.b, self.H
        s = f"/transformer/h.{i}/attn"
        p = f"transformer.h.{i}.attn"
        w_attn = self.weight(f"{p}.c_attn.weight", [H, 3 * H])
        b_attn = self.weight(f"{p}.c_attn.bias", [3 * H])
        w_proj = self.weight(f"{p}.c_proj.weight", [H, H])
        b_proj = self.weight(f"{p}.c_proj.bias", [H])
        qkv = self.matmul_weight(f"{s}/c_attn", x, w_attn, b_attn, H, 3 * H)
        split_name = f"{s}/Split"
        q, k, v = [f"{split_name}_output_{j}" for j in range(3)]
        b.node("Split", split_name, [qkv, c["split"]], [q, k, v], axis=2)
        heads = []
        for j, (t, perm) in enumerate(((q, [0, 2, 1, 3]), (k, [0, 2, 3, 1]), (v, [0, 2, 1, 3]))):
            r = b.fwd(s, "Reshape", [t, c["heads_shape"]], suffix=f"_{j}")
            tr = b.fwd(s, "Transpose", [r], suffix=f"_{j}", perm=perm)
            heads.append((t, r, tr, perm))
        scores = b.fwd(s, "MatMul", [heads[0][2], heads[1][2]])
        scaled = b.fwd(s, "Div", [scores, c["scale"]])
        masked = b.fwd(s, "Add", [scaled, mask])
        probs = b.fwd(s, "Softmax", [masked], axis=-1)
        ctx = b.fwd(s, "MatMul", [probs, heads[2][2]], suffix="_1")
        ctx_t = b.fwd(s, "Transpose", [ctx], suffix="_3", perm=[0, 2, 1, 3])
        merged = b.fwd(s, "Reshape", [ctx_t, c["merge_shape"]], suffix="_3")
        self.tape.append(("attn", s, qkv, split_name, heads, scores, scaled, masked, probs, ctx, ctx_t, merged))
        return self.matmul_weight(f"{s}/c_proj", merged, w_proj, b_proj, H, H)

    def mlp(self, i, x):
        H = self.H
        s = f"/transformer/h.{i}/mlp"
        p = f"transformer.h.{i}.mlp"
        w_fc = self.weight(f"{p}.c_fc.weight", [H, 4 * H])
        b_fc = self.weight(f"{p}.c_fc.bias", [4 * H])
        w_pr = self.weight(f"{p}.c_proj.weight", [4 * H, H])
        b_pr = self.weight(f"{p}.c_proj.bias", [H])
        fc = self.matmul_weight(f"{s}/c_fc", x, w_fc, b_fc, H, 4 * H)
        g = self.b.fwd(f"{s}/act", "Gelu", [fc], domain=MS)
        self.tape.append(("gelu", f"{s}/act/Gelu", fc, g))
        return self.matmul_weight(f"{s}/c_proj", g, w_pr, b_pr, 4 * H, H)

    def block(self, i, x, c, mask):
        H = self.H
        p = f"transformer.h.{i}"
        s = f"/transformer/h.{i}"
        ln1 = self.layer_norm(f"{s}/ln_1", x, self.weight(f"{p}.ln_1.weight", [H]), self.weight(f"{p}.ln_1.bias", [H]))
        res1 = self.residual(s, x, self.attention(i, ln1, c, mask))
        ln2 = self.layer_norm(f"{s}/ln_2", res1, self.weight(f"{p}.ln_2.weight", [H]),
                              self.weight(f"{p}.ln_2.bias", [H]))
        return self.residual(s, res1, self.mlp(i, ln2), suffix="_1")

    def forward(self, c):
        b, a, H = self.b, self.a, self.H
        batch, seq = a.batch_dim, a.seq_dim
        ids = b.graph_input("input_ids", TensorProto.INT64, [batch, seq])
        am = b.graph_input("attention_mask", TensorProto.INT64, [batch, seq])
        labels = b.graph_input("labels", TensorProto.INT64, [batch, seq])
        wte = self.weight("transformer.wte.weight", [self.V, H])
        wpe = self.weight("transformer.wpe.weight", [a.max_positions, H])
        # embeddings: wte[input_ids] + wpe[0:seq_len]
        s = "/transformer"
        tok = b.fwd(f"{s}/wte", "Gather", [wte, ids], axis=0)
        ids_shape = b.fwd(s, "Shape", [ids])
        seq_len = b.fwd(s, "Gather", [ids_shape, c["one_i64"]], axis=0)
        seq_end = b.fwd(s, "Unsqueeze", [seq_len, c["axes0"]])
        pos = b.fwd(f"{s}/wpe", "Slice", [wpe, c["axes0"], seq_end, c["axes0"]])
        h = self.b.fwd(s, "Add", [tok, pos])
        self.embed = (wte, wpe, ids, tok, pos, seq_end, f"{s}/wte/Gather", f"{s}/wpe/Slice", f"{s}/Add", h)
        # additive attention mask [batch, 1, 1, seq_len], shared by all layers
        m = b.fwd(s, "Cast", [am], to=b.elem)
        m = b.fwd(s, "Sub", [c["one"], m])
        m = b.fwd(s, "Mul", [m, c["neg"]])
        mask = b.fwd(s, "Unsqueeze", [m, c["mask_axes"]], suffix="_1")
        for i in range(a.layers):
            h = self.block(i, h, c, mask)
        self.last_hidden = h
        lnf = self.layer_norm(f"{s}/ln_f", h, self.weight("transformer.ln_f.weight", [H]),
                              self.weight("transformer.ln_f.bias", [H]))
        # tied LM head on the flattened hidden states, then the ORTModule cross-entropy
        s = "/lm_head"
        wte_t = b.fwd(s, "Transpose", [wte], perm=[1, 0])
        lnf2d = b.fwd(s, "Reshape", [lnf, self.flat_shape(H)])
        logits = b.fwd(s, "MatMul", [lnf2d, wte_t])
        labels1d = b.fwd("/loss", "Reshape", [labels, c["flat"]])
        sce = "/loss/SoftmaxCrossEntropyLossInternal"
        loss, log_prob = "loss", f"{sce}_output_1"
        b.node("SoftmaxCrossEntropyLossInternal", sce, [logits, labels1d, "", c["ignore"]], [loss, log_prob],
               domain=MS, reduction="mean", output_type=b.elem)
        self.head = (wte_t, lnf, lnf2d, logits, labels1d, sce, log_prob)
        b.node("YieldOp", "YieldOp", [loss], [grad(loss)], domain=MS, full_shape_outputs=[0])
        b.graph_output(loss, b.elem, [])
        return loss

    # ---- backward ----------------------------------------------------------------------------
    def weight_grad(self, g, a2d, dy2d, w):
        if self.a.weight_grad == "gemm":
            g("Gemm", [a2d, dy2d], [grad(w)], alpha=1.0, beta=1.0, transA=1, transB=0)
        else:
            g("FusedMatMul", [a2d, dy2d], [grad(w)], domain=MS, alpha=1.0, transA=1, transB=0,
              transBatchA=0, transBatchB=0)

    def back_linear(self, rec, dy, c):
        _, scope, x, w, bias, mm, out, k, n = rec
        ga = GradScope(self.b, f"{scope}/Add")
        ga("Identity", [dy], [grad(mm)])
        ga("ReduceSum", [dy, c["bias_axes"]], [grad(bias)], keepdims=0, noop_with_empty_axes=0)
        gm = GradScope(self.b, f"{scope}/MatMul")
        gm("FusedMatMul", [grad(mm), w], [grad(x)], domain=MS, alpha=1.0, transA=0, transB=1,
           transBatchA=0, transBatchB=0)
        a2d = gm("Reshape", [x, self.flat_shape(k)], [f"{gm.prefix}/A_reshape_2d"])
        dy2d = gm("Reshape", [grad(mm), self.flat_shape(n)], [f"{gm.prefix}/dY_reshape_2d"])
        self.weight_grad(gm, a2d, dy2d, w)
        return grad(x)

    def back_attn(self, rec, c):
        _, s, qkv, split_name, heads, scores, scaled, masked, probs, ctx, ctx_t, merged = rec
        b = self.b
        GradScope(b, f"{s}/Reshape_3")("Reshape", [grad(merged), c["heads_shape"]], [grad(ctx_t)])
        GradScope(b, f"{s}/Transpose_3")("Transpose", [grad(ctx_t)], [grad(ctx)], perm=[0, 2, 1, 3])
        g = GradScope(b, f"{s}/MatMul_1")
        fmm = dict(domain=MS, alpha=1.0, transBatchA=0, transBatchB=0)
        g("FusedMatMul", [grad(ctx), heads[2][2]], [grad(probs)], transA=0, transB=1, **fmm)
        g("FusedMatMul", [probs, grad(ctx)], [grad(heads[2][2])], transA=1, transB=0, **fmm)
        GradScope(b, f"{s}/Softmax")("SoftmaxGrad_13", [grad(probs), probs], [grad(masked)], domain=MS, axis=-1)
        GradScope(b, f"{s}/Add")("Identity", [grad(masked)], [grad(scaled)])
        GradScope(b, f"{s}/Div")("Div", [grad(scaled), c["scale"]], [grad(scores)])
        g = GradScope(b, f"{s}/MatMul")
        g("FusedMatMul", [grad(scores), heads[1][2]], [grad(heads[0][2])], transA=0, transB=1, **fmm)
        g("FusedMatMul", [heads[0][2], grad(scores)], [grad(heads[1][2])], transA=1, transB=0, **fmm)
        for j, (t, r, tr, perm) in enumerate(heads):
            inv = [perm.index(d) for d in range(len(perm))]
            GradScope(b, f"{s}/Transpose_{j}")("Transpose", [grad(tr)], [grad(r)], perm=inv)
            GradScope(b, f"{s}/Reshape_{j}")("Reshape", [grad(r), c["merge_shape"]], [grad(t)])
        GradScope(b, split_name)("Concat", [grad(t) for t, _, _, _ in heads], [grad(qkv)], axis=2)
        return grad(qkv)

    def back_ln(self, rec, dy, dx):
        _, name, x, w, bias, outs = rec
        GradScope(self.b, name)("LayerNormalizationGrad", [dy, x, w, outs[1], outs[2]], [dx, grad(w), grad(bias)],
                                domain=MS, axis=-1, epsilon=LN_EPS, stash_type=1)

    def accumulate(self, t, parts):
        self.b.node("Sum", f"AccumulateGrad_{grad(t)}", parts, [grad(t)])

    def backward(self, c):
        b, H = self.b, self.H
        wte_t, lnf, lnf2d, logits, labels1d, sce, log_prob = self.head
        wte = self.embed[0]
        GradScope(b, sce)("SoftmaxCrossEntropyLossInternalGrad", [grad("loss"), log_prob, labels1d, "", c["ignore"]],
                          [grad(logits)], domain=MS, reduction="mean", output_type=b.elem)
        g = GradScope(b, "/lm_head/MatMul")
        g("FusedMatMul", [grad(logits), wte_t], [grad(lnf2d)], domain=MS, alpha=1.0, transA=0, transB=1,
          transBatchA=0, transBatchB=0)
        self.weight_grad(g, lnf2d, grad(logits), wte_t)
        GradScope(b, "/lm_head/Transpose")("Transpose", [grad(wte_t)], [f"{grad(wte)}_1"], perm=[1, 0])
        g = GradScope(b, "/lm_head/Reshape")
        lnf_shape = g("Shape", [lnf], [f"{g.prefix}/x_shape"])
        g("Reshape", [grad(lnf2d), lnf_shape], [grad(lnf)])
        # replay the forward tape in reverse; a tensor read twice gets `_grad_0/_1` partials + Sum
        pending = {}  # residual tensor -> its partial gradient from the skip connection
        dy = grad(lnf)
        for rec in reversed(self.tape):
            kind = rec[0]
            if kind == "ln":
                x = rec[2]
                if x in pending:
                    self.back_ln(rec, dy, f"{grad(x)}_1")
                    self.accumulate(x, [pending.pop(x), f"{grad(x)}_1"])
                else:
                    self.back_ln(rec, dy, grad(x))
                dy = grad(x)
            elif kind == "residual":
                _, name, x, y, out = rec
                g = GradScope(b, name)
                pending[x] = g("Identity", [dy], [f"{grad(x)}_0"])
                dy = g("Identity", [dy], [grad(y)])
            elif kind == "linear":
                dy = self.back_linear(rec, dy, c)
            elif kind == "gelu":
                _, name, fc, out = rec
                dy = GradScope(b, name)("GeluGrad", [dy, fc], [grad(fc)], domain=MS)
            elif kind == "attn":
                dy = self.back_attn(rec, c)
        if pending:
            raise AssertionError(f"unconsumed residual gradients: {sorted(pending)}")
        # embeddings: d(tok + pos)
        _, wpe, ids, tok, pos, seq_end, gather, slice_, add, h = self.embed
        g = GradScope(b, add)
        g("Identity", [dy], [grad(tok)])
        g("ReduceSum", [dy, c["axes0"]], [grad(pos)], keepdims=0, noop_with_empty_axes=0)
        g = GradScope(b, slice_)
        wpe_shape = g("Shape", [wpe], [f"{g.prefix}/x_shape"])
        g("SliceGrad", [grad(pos), wpe_shape, c["axes0"], seq_end, c["axes0"]], [grad(wpe)], domain=MS)
        g = GradScope(b, gather)
        wte_shape = g("Shape", [wte], [f"{g.prefix}/x_shape"])
        g("GatherGrad", [wte_shape, ids, grad(tok)], [f"{grad(wte)}_0"], domain=MS, axis=0)
        self.accumulate(wte, [f"{grad(wte)}_0", f"{grad(wte)}_1"])

    def build(self):
        c = self.consts()
        self.forward(c)
        self.backward(c)
        b = self.b
        for name, shape in self.weights:
            b.graph_input(name, b.elem, shape)
            b.graph_output(grad(name), b.elem, shape)
        graph = helper.make_graph(b.nodes, "gpt2_training", b.inputs, b.outputs, initializer=b.inits)
        opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(MS, 1)]
        model = helper.make_model(graph, opset_imports=opsets, producer_name="memopt gen_transformer_training.py")
        model.ir_version = IR_VERSION
        return model


def check_structure(model):
    """Topological order, single producers, unique node names, outputs produced. Returns problems."""
    g = model.graph
    known = {i.name for i in g.input} | {i.name for i in g.initializer} | {""}
    problems, names = [], set()
    for n in g.node:
        if n.name in names:
            problems.append(f"duplicate node name {n.name}")
        names.add(n.name)
        for i in n.input:
            if i not in known:
                problems.append(f"node {n.name}: input {i} not produced before use")
        for o in n.output:
            if o in known:
                problems.append(f"node {n.name}: output {o} produced twice")
            known.add(o)
    for o in g.output:
        if o.name not in known:
            problems.append(f"graph output {o.name} never produced")
    used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    for n in g.node:
        for o in n.output:
            if o and o not in used:
                problems.append(f"node {n.name}: output {o} unused")
    return problems


def run_checker(model):
    """onnx.checker on a copy at opset 17: LayerNormalization is an ORT contrib op at opset 15 (the
    real ORT graphs fail the checker for the same reason); every other op here is unchanged 15..17."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for o in m.opset_import:
        if o.domain == "":
            o.version = 17
    onnx.checker.check_model(m, full_check=False)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--max-positions", type=int, default=1024, help="rows of the position embedding")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float16")
    p.add_argument("--batch-dim", default="batch")
    p.add_argument("--seq-dim", default="seq_len")
    p.add_argument("--weight-grad", choices=["gemm", "fusedmatmul"], default="gemm",
                   help="op for weight gradients on 2-D reshapes (ORT emits Gemm)")
    p.add_argument("--out", required=True)
    p.add_argument("--check", action="store_true", help="verify structure and run onnx.checker")
    p.add_argument("--stats", action="store_true", help="print node count and op histogram")
    a = p.parse_args(argv)
    if a.layers < 1:
        p.error("--layers must be >= 1")
    try:
        model = Gpt2TrainingGraph(a).build()
    except ValueError as e:
        p.error(str(e))
    if a.check:
        problems = check_structure(model)
        if problems:
            print("\n".join(problems[:50]), file=sys.stderr)
            return 1
        run_checker(model)
    onnx.save(model, a.out)
    if a.stats:
        hist = collections.Counter((n.domain + "::" if n.domain else "") + n.op_type for n in model.graph.node)
        print(f"{a.out}: {len(model.graph.node)} nodes, {len(model.graph.input)} inputs, "
              f"{len(model.graph.output)} outputs, {len(model.graph.initializer)} initializers")
        for op, k in sorted(hist.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {k:6d} {op}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
