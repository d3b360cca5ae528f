#!/usr/bin/env python3
"""`memopt plan --budget --target ort` against ONNX Runtime 1.19.2's own memory optimizer.

For each graph: ORT first loads it with an empty config and saves the graph its session analyses
(ORT's CPU session may change a graph before its optimizer sees it); memopt plans on that graph;
ORT applies memopt's config (session entries optimization.memory_optimizer_config and
optimization.enable_memory_probe_recompute_config, optimized_model_filepath); and `memopt scan` of
ORT's rewrite must report exactly the peak `memopt plan` predicted. The same check on the
per-occurrence plan (--target memopt) is reported, not required: ORT ignores its selector entries.

    check_target_ort.py MEMOPT WORK_DIR MODEL:DIMS [MODEL:DIMS ...]
"""
import json
import os
import subprocess
import sys

import onnxruntime as ort

BUDGETS = ["0.9", "0.8"]


def ort_apply(model, config, out):
    so = ort.SessionOptions()
    so.add_session_config_entry("optimization.memory_optimizer_config", config)
    so.add_session_config_entry("optimization.enable_memory_probe_recompute_config", "1:1")
    so.optimized_model_filepath = out
    # The memory optimizer runs at every level; no other transformer should change the graph.
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def memopt_json(memopt, args):
    run = subprocess.run([memopt, "-qq"] + args + ["--format", "json"], capture_output=True, text=True)
    if run.returncode not in (0, 3):
        raise RuntimeError("memopt %s: exit %d: %s" % (" ".join(args), run.returncode, run.stderr.strip()))
    return json.loads(run.stdout)


def main():
    memopt, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    failures = 0
    checked = 0
    for spec in sys.argv[3:]:
        model, dims = spec.rsplit(":", 1)
        name = os.path.splitext(os.path.basename(model))[0]
        dims_args = ["--dims", dims] if dims else []
        empty = os.path.join(work, "empty.json")
        with open(empty, "w") as f:
            f.write("[]")
        analysed = os.path.join(work, name + "_ort.onnx")
        ort_apply(model, empty, analysed)
        for budget in BUDGETS:
            for target in ["ort", "memopt"]:
                config = os.path.join(work, "%s_%s_%s.json" % (name, budget, target))
                plan = memopt_json(memopt, ["plan", analysed, "--budget", budget, "--target", target, "-o", config]
                                  + dims_args)
                predicted = plan["peak"]["bytes"]
                with open(config) as f:
                    entries = json.load(f)
                rewritten = os.path.join(work, "%s_%s_%s_rewritten.onnx" % (name, budget, target))
                ort_apply(analysed, config, rewritten)
                measured = memopt_json(memopt, ["scan", rewritten] + dims_args)["peak"]["bytes"]
                line = "%s budget %s target %s: %d entries, predicted %d, ORT's rewrite %d" % (
                    name, budget, target, len(entries), predicted, measured)
                if target == "ort":
                    checked += 1
                    if any("@" in e for e in entries):
                        print("FAIL " + line + ": the config selects single occurrences")
                        failures += 1
                    elif predicted != measured:
                        print("FAIL " + line)
                        failures += 1
                    else:
                        print("ok   " + line)
                else:
                    print("info " + line + ("" if predicted == measured else " (ORT applies every occurrence)"))
    print("%d target-ort plans checked, %d failed" % (checked, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
