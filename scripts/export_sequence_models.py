#!/usr/bin/env python3
"""Exports small models whose dynamo export holds sequence ops (SplitToSequence / SequenceAt), as
fixtures for `memopt grad`: a tensor that reaches the loss through a sequence must never be
reported as "not affecting" it (the op without a gradient rule is named instead).

Models (tiny, deterministic weights):
  gru_lm     Embedding -> nn.GRU (1 layer) -> Linear -> cross-entropy loss;
  unbind     x * w, unbind over the batch dim, the rows summed with a second weight, mean loss.

Both export with torch.onnx.dynamo_export (PyTorch 2.4's dynamo exporter; the onnxscript
optimizer that runs after it is switched off, as for training exports, see
scripts/export_torch_exports.py). Writes <out>/<model>_dynamo.onnx; the graphs read no external
data. Read by tests/golden/cli/grad_err_sequence_*.cmd.

Usage: .venv-torch/bin/python scripts/export_sequence_models.py [--out tests/data/grad_cases]
Needs torch 2.4.x, onnx and onnxscript 0.1.0 (.venv-torch, as for export_torch_exports.py).
"""
import argparse
import os
import warnings

import onnx
import torch

VOCAB, HIDDEN, BATCH, SEQ = 11, 6, 2, 5


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


def export(module, args, path):
    import onnxscript.optimizer
    saved = onnxscript.optimizer.optimize
    onnxscript.optimizer.optimize = lambda model, *a, **k: model  # keeps the weights as initializers
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.dynamo_export(module, *args).save(path)
    finally:
        onnxscript.optimizer.optimize = saved
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
    export(GruLm().train(), (ids, labels), os.path.join(out, "gru_lm_dynamo.onnx"))
    export(Unbind().train(), (torch.randn(3, HIDDEN, generator=g),), os.path.join(out, "unbind_dynamo.onnx"))


if __name__ == "__main__":
    main()
