#!/usr/bin/env python3
"""Measures memopt on the current-PyTorch fixtures (scripts/export_torch_current.py): per case,
grad + run, and how many PyTorch parameters get a gradient under their own name equal to autograd
(rel 1e-4). Usage: measure.py MEMOPT FIXTURES WORK"""
import json, os, subprocess, sys
import numpy as np
import onnx, onnx.numpy_helper

memopt, fixtures, work = sys.argv[1:4]
only = set(sys.argv[4].split(",")) if len(sys.argv) > 4 else set()
for name in sorted(os.listdir(fixtures)):
    d = os.path.join(fixtures, name)
    if not os.path.isfile(os.path.join(d, "manifest.json")) or (only and name not in only):
        continue
    m = json.load(open(os.path.join(d, "manifest.json")))
    w = os.path.join(work, name)
    os.makedirs(w, exist_ok=True)
    def step(*cmd):
        r = subprocess.run([memopt, *cmd], capture_output=True, text=True)
        return r.returncode, (r.stderr.strip().splitlines() or [""])[-1]
    rc, err = step("grad", os.path.join(d, "model.onnx"), "-o", os.path.join(w, "train.onnx"))
    if rc:
        print(f"{name}: grad failed: {err}"); continue
    out = os.path.join(w, "out")
    rc, err = step("run", os.path.join(w, "train.onnx"), "--inputs", os.path.join(d, "inputs"), "--save-outputs", out)
    if rc:
        print(f"{name}: run failed: {err}"); continue
    ok, bad, missing = 0, [], []
    want = {p: onnx.numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "expected", p + "_grad.pb")))
            for p in m["gradients"]}
    # As lib/grad/grad_fixture_test.cc: the scale is at least 1% of the model's largest gradient, so
    # gradients that vanish mathematically (rounding noise in both frameworks) do not divide by ~0.
    floor = 0.01 * max(np.abs(v).max() for v in want.values())
    for p, exp in want.items():
        got_path = os.path.join(out, p + "_grad.pb")
        if not os.path.exists(got_path):
            missing.append(p); continue
        got = onnx.numpy_helper.to_array(onnx.load_tensor(got_path))
        if got.shape == exp.shape and np.abs(got - exp).max() <= 1e-4 * max(floor, np.abs(exp).max()):
            ok += 1
        else:
            bad.append(p)
    print(f"{name}: {ok}/{len(m['gradients'])} match; missing {len(missing)} {missing[:3]}; differ {len(bad)} {bad[:3]}")
