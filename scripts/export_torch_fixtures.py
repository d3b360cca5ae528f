#!/usr/bin/env python3
"""Exports tiny PyTorch models and their autograd gradients as test fixtures for `memopt grad`.

For each model (GPT-2-, BERT-, Llama- and ResNet-style, and an MLP without a loss) this writes
    <out>/<name>/model.onnx           forward model (torch.onnx.export, legacy exporter, opset 17,
                                       random weights stored inside, no constant folding so every
                                       parameter keeps its name and layout)
    <out>/<name>/inputs/<input>.pb    TensorProto per graph input (the `memopt run --inputs` layout)
    <out>/<name>/expected/<param>_grad.pb
                                       PyTorch autograd gradient of every parameter
    <out>/<name>/manifest.json        loss name and value, gradient names, versions
and <out>/unsupported_hardswish/model.onnx (an op without a gradient rule, for the CLI error test).

Gradients: models with a loss store d loss / d param. The MLP returns logits (no scalar output);
`memopt grad` then feeds every output its own gradient through the YieldOp, which the CPU
executor passes through as the output value itself, so the stored gradient is that of
1/2 * ||logits||^2, i.e. torch's backward with grad_output = logits.

The C++ test lib/grad/grad_fixture_test.cc reads these files (it does not need Python).

Usage: python3 scripts/export_torch_fixtures.py [--out tests/data/grad_fixtures]
Needs torch (CPU is enough) and onnx.
"""
import argparse
import json
import math
import os
import shutil
import warnings

import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

SEQ, BATCH, VOCAB, HIDDEN, HEADS, LAYERS = 8, 2, 50, 32, 2, 2
# ConvNet and MLP widths. scripts/bench_exec.py imports this module and scales every size up.
CNN_CHANNELS, CNN_CLASSES = 8, 5
MLP_IN, MLP_HIDDEN, MLP_OUT = 6, 16, 4


class SelfAttention(nn.Module):
    def __init__(self, causal):
        super().__init__()
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.causal = causal

    def forward(self, x, additive_mask=None):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(HIDDEN, dim=2)
        q, k, v = (z.reshape(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(c // HEADS)
        if self.causal:
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
            scores = scores.masked_fill(mask, -1e4)
        if additive_mask is not None:
            scores = scores + additive_mask
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Gpt2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(HIDDEN)
        self.attn = SelfAttention(causal=True)
        self.ln_2 = nn.LayerNorm(HIDDEN)
        self.fc = nn.Linear(HIDDEN, 4 * HIDDEN)
        self.fc_proj = nn.Linear(4 * HIDDEN, HIDDEN)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln_2(x))))


class Gpt2(nn.Module):
    """Pre-LN decoder with learned positions and an LM head tied to the token embedding."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.wpe = nn.Embedding(SEQ, HIDDEN)
        self.h = nn.ModuleList([Gpt2Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(HIDDEN)

    def forward(self, input_ids, labels):
        pos = torch.arange(input_ids.shape[1])
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention(causal=False)
        self.ln_attn = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.intermediate = nn.Linear(HIDDEN, 2 * HIDDEN)
        self.output = nn.Linear(2 * HIDDEN, HIDDEN)
        self.ln_out = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x, mask):
        x = self.ln_attn(x + self.attn(x, mask))
        return self.ln_out(x + self.output(F.gelu(self.intermediate(x))))


class Bert(nn.Module):
    """Post-LN encoder with token types, a padding mask and a masked-LM head (ignore_index -100)."""

    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.position = nn.Embedding(SEQ, HIDDEN)
        self.token_type = nn.Embedding(2, HIDDEN)
        self.ln_emb = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer() for _ in range(LAYERS)])
        self.head = nn.Linear(HIDDEN, HIDDEN)
        self.ln_head = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.decoder_bias = nn.Parameter(torch.zeros(VOCAB))

    def forward(self, input_ids, token_type_ids, attention_mask, labels):
        pos = torch.arange(input_ids.shape[1])
        x = self.ln_emb(self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids))
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        h = self.ln_head(F.gelu(self.head(x)))
        logits = h @ self.word.weight.t() + self.decoder_bias
        return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)


class RmsNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(HIDDEN))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm_1 = RmsNorm()
        self.q = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.norm_2 = RmsNorm()
        self.gate = nn.Linear(HIDDEN, 2 * HIDDEN, bias=False)
        self.up = nn.Linear(HIDDEN, 2 * HIDDEN, bias=False)
        self.down = nn.Linear(2 * HIDDEN, HIDDEN, bias=False)

    def forward(self, x, cos, sin):
        b, t, c = x.shape
        h = self.norm_1(x)
        q, k, v = (p(h).reshape(b, t, HEADS, c // HEADS).transpose(1, 2) for p in (self.q, self.k, self.v))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = q @ k.transpose(-2, -1) / math.sqrt(c // HEADS)
        scores = scores + torch.triu(torch.full((t, t), -1e4), diagonal=1)
        y = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.o(y)
        h = self.norm_2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    """RMSNorm, rotary positions, SwiGLU, untied LM head, log_softmax + nll_loss."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([LlamaLayer() for _ in range(LAYERS)])
        self.norm = RmsNorm()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids, labels):
        t = input_ids.shape[1]
        d = HIDDEN // HEADS
        inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        freqs = torch.arange(t).float()[:, None] * inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, cos, sin)
        logits = self.lm_head(self.norm(x))
        return F.nll_loss(F.log_softmax(logits, dim=-1).reshape(-1, VOCAB), labels.reshape(-1))


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class Cnn(nn.Module):
    """ResNet-style: stem conv + BN (training mode) + ReLU + max pool, a basic block, average pool."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, CNN_CHANNELS, 3, padding=1)
        self.bn = nn.BatchNorm2d(CNN_CHANNELS)
        self.block = BasicBlock(CNN_CHANNELS)
        self.fc = nn.Linear(CNN_CHANNELS, CNN_CLASSES)

    def forward(self, images, labels):
        x = F.max_pool2d(F.relu(self.bn(self.stem(images))), 2)
        x = F.adaptive_avg_pool2d(self.block(x), 1).flatten(1)
        return F.cross_entropy(self.fc(x), labels)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(MLP_IN, MLP_HIDDEN)
        self.fc2 = nn.Linear(MLP_HIDDEN, MLP_OUT)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


class HardSwishMlp(nn.Module):
    """HardSwish has no gradient rule in memopt: the model for the CLI's error message test."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.hardswish(self.fc1(x))).sum()


def fixtures():
    g = torch.Generator().manual_seed(1234)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    labels = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    mlm_labels = labels.clone()
    mlm_labels[:, ::3] = -100
    token_types = torch.tensor([[0] * 4 + [1] * 4, [0] * 6 + [1] * 2])
    attention_mask = torch.tensor([[1] * SEQ, [1] * 6 + [0] * 2])
    return [
        ("gpt2_tiny", Gpt2, {"input_ids": ids, "labels": labels}, False),
        ("bert_tiny", Bert, {"input_ids": ids, "token_type_ids": token_types, "attention_mask": attention_mask,
                             "labels": mlm_labels}, False),
        ("llama_tiny", Llama, {"input_ids": ids, "labels": labels}, False),
        ("cnn_tiny", Cnn, {"images": torch.randn(BATCH, 3, 8, 8, generator=g),
                           "labels": torch.randint(0, 5, (BATCH,), generator=g)}, True),
        ("mlp_logits", Mlp, {"x": torch.randn(3, 6, generator=g)}, False),
    ]


def randomize(model, seed):
    """Random weights, including norm scales and biases (torch initializes those to 1 and 0)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (0.5 if p.dim() < 2 else 1.0 / math.sqrt(p.shape[-1])))
            if p.dim() == 1:
                p.add_(1.0 if p.shape[0] == HIDDEN else 0.0)


def save_tensor(path, array, name):
    t = onnx.numpy_helper.from_array(array, name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def export(out_dir, name, cls, inputs, training, seed):
    torch.manual_seed(seed)
    model = cls()
    randomize(model, seed)
    model.train(training)
    folder = os.path.join(out_dir, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "inputs"))
    os.makedirs(os.path.join(folder, "expected"))
    names = list(inputs)
    args = tuple(inputs[n] for n in names)
    loss_name = "logits" if name == "mlp_logits" else "loss"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, os.path.join(folder, "model.onnx"), dynamo=False, opset_version=17,
                          input_names=names, output_names=[loss_name], do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL)
    onnx_model = onnx.load(os.path.join(folder, "model.onnx"))
    initializers = {t.name for t in onnx_model.graph.initializer}

    # Autograd on a fresh copy with the same weights (export may run the model in another mode).
    model.zero_grad()
    model.train(training)
    out = model(*args)
    if out.dim() == 0:
        out.backward()
        loss_value = float(out.detach())
    else:
        out.backward(out.detach())
        loss_value = None
    grads = []
    for pname, p in model.named_parameters():
        if pname not in initializers:
            raise SystemExit(f"{name}: parameter {pname} is not an initializer of the exported model")
        save_tensor(os.path.join(folder, "expected", pname + "_grad.pb"), p.grad.numpy(), pname + "_grad")
        grads.append(pname)
    for n, t in inputs.items():
        save_tensor(os.path.join(folder, "inputs", n + ".pb"), t.numpy(), n)
    manifest = {
        "model": "model.onnx",
        "loss": loss_name if loss_value is not None else None,
        "loss_value": loss_value,
        "seeded_outputs": [loss_name],
        "gradients": grads,
        "torch_version": torch.__version__,
        "onnx_opset": 17,
    }
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(r, fn)) for r, _, fs in os.walk(folder) for fn in fs)
    print(f"{name}: {len(onnx_model.graph.node)} nodes, {len(grads)} parameters, {size} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "grad_fixtures"))
    args = parser.parse_args()
    for i, (name, cls, inputs, training) in enumerate(fixtures()):
        export(args.out, name, cls, inputs, training, seed=100 + i)
    # Only the model (no manifest): `memopt grad` must name the op it cannot differentiate.
    folder = os.path.join(args.out, "unsupported_hardswish")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    torch.manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(HardSwishMlp(), (torch.randn(3, 6),), os.path.join(folder, "model.onnx"), dynamo=False,
                          opset_version=17, input_names=["x"], output_names=["loss"], do_constant_folding=False)
    print("unsupported_hardswish: model only")


if __name__ == "__main__":
    main()
