#!/usr/bin/env python3
"""Second half of check_torch_exports.sh, for a Python with onnx and onnxruntime-training:
  * the models `memopt grad` and `memopt apply` wrote (WORK/<case>/train.onnx, opt.onnx) pass the
    ONNX checker and load in an ONNX Runtime CPU session;
  * for each dynamo export, `memopt scan` of the training graph built from the file (memopt
    inlines its functions) lists the same candidates as of the one built from the same model
    inlined by onnx.inliner.inline_local_functions.
Usage: check_torch_exports.py MEMOPT FIXTURES_DIR WORK_DIR
"""
import json
import os
import re
import subprocess
import sys

import onnx
import onnx.inliner
import onnxruntime as ort


ORT_ONNX_DOMAIN_OPS = {"MaxPoolGrad", "AveragePoolGrad"}
# Gradient ops ONNX Runtime's CPU provider cannot run: memopt's own recurrent gradients (ai.memopt,
# recomputing the forward; ORT's LSTMGrad reads what its LSTMTraining stashed) and ResizeGrad,
# which ORT has for CUDA only. A model with them is checked, not loaded.
NOT_ON_ORT_CPU = {("ai.memopt", "LSTMGrad"), ("ai.memopt", "GRUGrad"), ("ai.memopt", "RNNGrad"),
                  ("com.microsoft", "ResizeGrad")}


def ops_not_on_ort_cpu(path):
    model = onnx.load(path, load_external_data=False)
    return sorted({f"{n.domain}::{n.op_type}" for n in model.graph.node if (n.domain, n.op_type) in NOT_ON_ORT_CPU})


def scan_table(memopt, model):
    out = subprocess.run([memopt, "scan", model, "--format", "csv"], capture_output=True, text=True, check=True)
    return out.stdout


def main():
    memopt, fixtures, work = sys.argv[1:4]
    failed = False
    for name in sorted(os.listdir(fixtures)):
        manifest_path = os.path.join(fixtures, name, "manifest.json")
        if not os.path.isfile(manifest_path):
            continue
        manifest = json.load(open(manifest_path))
        w = os.path.join(work, name)
        notes = []
        try:
            for written in ("train.onnx", "opt.onnx"):
                path = os.path.join(w, written)
                try:
                    onnx.checker.check_model(path)
                except onnx.checker.ValidationError as e:
                    # ORT defines MaxPoolGrad and AveragePoolGrad in the ai.onnx domain (its training
                    # graphs use them so); ONNX itself has no schema for them. ORT loading the model
                    # below is the check for those.
                    match = re.search(r"No Op registered for (\w+) with domain_version", str(e))
                    if not match or match.group(1) not in ORT_ONNX_DOMAIN_OPS:
                        raise
                    note = f"checker: {match.group(1)} is ORT's"
                    if note not in notes:
                        notes.append(note)
                missing = ops_not_on_ort_cpu(path)
                if missing:
                    note = "ORT load skipped: " + ", ".join(missing) + " (no ORT CPU kernel)"
                    if note not in notes:
                        notes.append(note)
                    continue
                options = ort.SessionOptions()
                options.log_severity_level = 3  # ORT's constant folding warns about every CastLike
                ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            notes.append("checker ok" if any(n.startswith("ORT load skipped") for n in notes) else
                         "checker and ORT load ok")
            if manifest["exporter"] == "dynamo":
                inlined = onnx.inliner.inline_local_functions(onnx.load(os.path.join(fixtures, name, "model.onnx")))
                inlined_path = os.path.join(w, "onnx_inlined.onnx")
                onnx.save(inlined, inlined_path)
                subprocess.run([memopt, "grad", inlined_path, "-o", os.path.join(w, "onnx_inlined_train.onnx")],
                               capture_output=True, check=True)
                ours = scan_table(memopt, os.path.join(w, "train.onnx"))
                theirs = scan_table(memopt, os.path.join(w, "onnx_inlined_train.onnx"))
                if ours != theirs:
                    raise AssertionError(f"scan differs from the onnx.inliner model:\n{ours}\nvs\n{theirs}")
                notes.append(f"scan equals onnx.inliner's ({len(ours.splitlines()) - 1} candidate rows)")
        except Exception as e:  # noqa: BLE001 - every failure is reported with the case
            failed = True
            print(f"FAIL {name}: {type(e).__name__}: {str(e).strip()[:2000]}")
            continue
        print(f"ok {name}: {', '.join(notes)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
