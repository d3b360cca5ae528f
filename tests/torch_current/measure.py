#!/usr/bin/env python3
"""Measures memopt on exported fixtures (scripts/export_torch_current.py, export_torch_exports.py):
per case, grad + run, and how many PyTorch parameters get a gradient under their own name equal to
autograd (rel 1e-4 of the larger of the gradient's and 1% of the model's largest gradient).

Exits 1 when a case does worse than EXPECTED says (every parameter, unless listed there).
Usage: measure.py MEMOPT FIXTURES WORK [only,names]"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper

# What memopt cannot give, by fixture, and why (docs/grad.md). An error case names the text the
# error must contain; a partial case how many parameters get their gradient.
EXPECTED = {
    "gemma_default": {"matching": 16, "why": "the exporter's optimizer folds each RMSNorm's 1 + weight into one "
                                             "constant (grad warns and names the 5 scales)"},
    **{f"{m}_default": {"error": "export with torch.onnx.export(..., optimize=False)",
                        "why": "the exporter's optimizer folds training-mode BatchNorm into the Conv weights"}
       for m in ("resnet", "mobilenetv2", "unet")},
}


def step(memopt, *cmd):
    r = subprocess.run([memopt, *cmd], capture_output=True, text=True)
    return r.returncode, (r.stderr.strip().splitlines() or [""])[-1]


def measure(memopt, d, w, m):
    """(matching, total, error line or "")."""
    os.makedirs(w, exist_ok=True)
    rc, err = step(memopt, "grad", os.path.join(d, "model.onnx"), "-o", os.path.join(w, "train.onnx"))
    if rc:
        return 0, len(m["gradients"]), "grad failed: " + err
    out = os.path.join(w, "out")
    rc, err = step(memopt, "run", os.path.join(w, "train.onnx"), "--inputs", os.path.join(d, "inputs"),
                   "--save-outputs", out)
    if rc:
        return 0, len(m["gradients"]), "run failed: " + err
    want = {p: onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "expected", p + "_grad.pb")))
            for p in m["gradients"]}
    floor = 0.01 * max(np.abs(v).max() for v in want.values())
    ok = 0
    for p, exp in want.items():
        got_path = os.path.join(out, p + "_grad.pb")
        if not os.path.exists(got_path):
            continue
        got = onnx.numpy_helper.to_array(onnx.load_tensor(got_path))
        if got.shape == exp.shape and np.abs(got - exp).max() <= 1e-4 * max(floor, np.abs(exp).max()):
            ok += 1
    return ok, len(want), ""


def main():
    memopt, fixtures, work = sys.argv[1:4]
    only = set(sys.argv[4].split(",")) if len(sys.argv) > 4 else set()
    failed = 0
    for name in sorted(os.listdir(fixtures)):
        d = os.path.join(fixtures, name)
        if not os.path.isfile(os.path.join(d, "manifest.json")) or (only and name not in only):
            continue
        m = json.load(open(os.path.join(d, "manifest.json")))
        ok, total, error = measure(memopt, d, os.path.join(work, name), m)
        expected = EXPECTED.get(name, {})
        if "error" in expected:
            good = expected["error"] in error
        else:
            good = not error and ok >= expected.get("matching", total)
        note = f" (expected: {expected['why']})" if expected and good else ""
        print(f"{'ok' if good else 'FAIL'} {name}: {ok}/{total} gradients equal autograd{note}"
              + (f"; {error}" if error else ""))
        failed += not good
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
