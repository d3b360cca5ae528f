#!/usr/bin/env python3
"""Exports small models whose gradients `memopt grad` must not get silently wrong, as fixtures
(tests/data/grad_cases/, read by tests/golden/cli/grad_*.cmd):

  gru_lm_dynamo      Embedding -> nn.GRU -> Linear -> cross-entropy (PyTorch 2.4 dynamo export):
                     the path to the loss runs through SplitToSequence / SequenceAt (unbind with a
                     scalar split and keepdims=0, the GRU unrolled over time), which the loader
                     lowers to tensor ops; the gradients equal autograd's;
  unbind_dynamo      x * w, torch.unbind, rows times v summed (PyTorch 2.4 dynamo export): the same;
  tied_lm_ts         Embedding -> LayerNorm -> Linear whose weight is the embedding's (PyTorch 2.4
                     TorchScript export, constant folding on, its default): the LM head reads a
                     transposed copy `onnx::MatMul_N`; grad warns that the tied weight is split;
  bn_train_dynamo    Conv2d -> BatchNorm2d in training mode -> mean (the dynamo exporter of
                     PyTorch 2.5+, the default of torch.onnx.export): written as an inference-mode
                     BatchNormalization whose metadata names the training-mode op; grad warns.

Each case needs its PyTorch: the 2.4 cases run with torch 2.4.x (.venv-torch, as for
scripts/export_torch_exports.py: torch 2.4.1, onnx 1.16.2, onnxscript 0.1.0), bn_train_dynamo with
a current one (torch 2.15, onnxscript 0.7.2, onnx 1.23); the others are skipped with a message.
The dynamo exports of 2.4 run with onnxscript's optimizer off, as for training exports.

Usage: PYTHON scripts/export_grad_cases.py [--out tests/data/grad_cases]
"""
import argparse
import os
import warnings

import onnx
import torch

VOCAB, HIDDEN, BATCH, SEQ = 11, 6, 2, 5
TORCH = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


class GruLm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, HIDDEN)
        self.rnn = torch.nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.head = torch.nn.Linear(HIDDEN, VOCAB)

    def forward(self, ids, labels):
        h, _ = self.rnn(self.emb(ids))
        logits = self.head(h)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


class Unbind(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.linspace(-1.0, 1.0, HIDDEN))
        self.v = torch.nn.Parameter(torch.linspace(0.5, 1.5, HIDDEN))

    def forward(self, x):
        rows = torch.unbind(x * self.w, dim=0)
        total = rows[0] * self.v
        for r in rows[1:]:
            total = total + r * self.v
        return total.mean()


class TiedLm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, HIDDEN)
        self.ln = torch.nn.LayerNorm(HIDDEN)
        self.head = torch.nn.Linear(HIDDEN, VOCAB, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids, labels):
        logits = self.head(self.ln(self.emb(ids)))
        return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


class ConvBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        return self.bn(self.conv(x)).mean()


def export_dynamo_24(module, args, path):
    import onnxscript.optimizer
    saved = onnxscript.optimizer.optimize
    onnxscript.optimizer.optimize = lambda model, *a, **k: model  # keeps the weights as initializers
    try:
        torch.onnx.dynamo_export(module, *args).save(path)
    finally:
        onnxscript.optimizer.optimize = saved


def export_ts(module, args, names, path):
    torch.onnx.export(module, args, path, dynamo=False, opset_version=17, input_names=names, output_names=["loss"],
                      training=torch.onnx.TrainingMode.TRAINING)


def export_dynamo(module, args, path):
    torch.onnx.export(module, args, dynamo=True, optimize=False).save(path)


def report(path):
    ops = sorted({n.op_type for n in onnx.load(path).graph.node})
    print(f"wrote {path}: {', '.join(ops)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tests/data/grad_cases")
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    labels = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
    x = torch.randn(3, HIDDEN, generator=g)
    image = torch.randn(2, 3, 8, 8, generator=g)
    warnings.simplefilter("ignore")
    if TORCH[:2] == (2, 4):
        for name, export in [
            ("gru_lm_dynamo", lambda p: export_dynamo_24(GruLm().train(), (ids, labels), p)),
            ("unbind_dynamo", lambda p: export_dynamo_24(Unbind().train(), (x,), p)),
            ("tied_lm_ts", lambda p: export_ts(TiedLm().train(), (ids, labels), ["ids", "labels"], p)),
        ]:
            path = os.path.join(out, name + ".onnx")
            export(path)
            report(path)
    else:
        print(f"torch {torch.__version__}: gru_lm_dynamo, unbind_dynamo and tied_lm_ts need torch 2.4.x; skipped")
    if TORCH >= (2, 5):
        path = os.path.join(out, "bn_train_dynamo.onnx")
        export_dynamo(ConvBn().train(), (image,), path)
        report(path)
    else:
        print(f"torch {torch.__version__}: bn_train_dynamo needs torch 2.5 or newer; skipped")


if __name__ == "__main__":
    main()
