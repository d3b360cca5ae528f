#!/usr/bin/env python3
"""The lowest reachable peak of every planner model against the anchors, beyond transformers.

For each graph (the small ConvNet and MLP fixtures, and the PyTorch 2.15 exports of
tests/data/torch_current after `memopt grad`: ResNet, U-Net, Mistral, Gemma), `memopt plan --sweep`
with --ops extended in three models:
  * ORT's model (--splits off --checkpoints off): one clone per recomputed value;
  * with splits, keeps and private chains (--checkpoints off): several clones of a value, one per
    group of readers, the original kept for the first readers, and chains recomputed per group;
  * the full model (the defaults): also the per-block checkpoint plans;
and beside them the sweep's references (ORT level 1 and 2, per-block checkpointing) and, where
tests/data/remat_reference records it, the exact reference's best schedule (HiGHS,
scripts/remat_reference.py). Each cell: the lowest peak as a change from the unoptimized one, the
added compute (cost model) to reach it, and the planner's time for the sweep.

A benchmark, not a test: prints one markdown table (docs/benchmarks.md keeps the last one) and exits
0 whatever the numbers are, non-zero when a command fails. Standard library only.
  scripts/bench_remat.py [--memopt build/tools/memopt] [--work DIR] [--points 5]
A second table lists each model's frontier: every sweep point (peak vs added compute), the
references, and the exact reference's schedules at its targets (lowest peak, budgets 0.95-0.7).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# name, model (repository-relative; "grad:" = a forward export `memopt grad` turns into a training
# graph first), dims, reference record name
GRAPHS = [
    ("Tanh/Sigmoid MLP", "tests/data/plan/tanh_mlp_train.onnx", "", "tanh_mlp"),
    ("ReLU MLP, batch 4", "tests/data/plan/relu_mlp_train.onnx", "batch=4", "relu_mlp"),
    ("ConvNet with a residual block", "tests/data/plan/convnet_residual_train.onnx", "", "convnet_residual"),
    ("ConvNet fixture, batch 2", "tests/data/plan/convnet_bn_train.onnx", "batch=2", "convnet_bn"),
    ("ResNet (torchvision-style), batch 8", "grad:tests/data/torch_current/resnet_noopt/model.onnx", "batch=8", None),
    ("U-Net, batch 8", "grad:tests/data/torch_current/unet_noopt/model.onnx", "batch=8", None),
    ("Mistral, 4 x 64", "grad:tests/data/torch_current/mistral_default/model.onnx", "batch=4,seq_len=64", None),
    ("Gemma, 4 x 64", "grad:tests/data/torch_current/gemma_noopt/model.onnx", "batch=4,seq_len=64", None),
]
MODELS = [("ORT's model", ["--splits", "off", "--checkpoints", "off"]),
          ("+ splits, keeps, private chains", ["--checkpoints", "off"]),
          ("+ checkpoint plans", [])]


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench_remat: {' '.join(cmd)} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def change(peak, base):
    return f"{100.0 * (peak - base) / base:+.1f}%"


def cell(peak, seconds, base):
    return f"{change(peak, base)}, {seconds * 1e6:.2f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memopt", default=os.path.join(ROOT, "build", "tools", "memopt"))
    parser.add_argument("--work", default=None)
    parser.add_argument("--points", type=int, default=5, help="sweep points per model (the frontier)")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="memopt_bench_remat_")
    os.makedirs(work, exist_ok=True)
    print("| graph | steps | unoptimized | " + " | ".join(f"{m} (sweep s)" for m, _ in MODELS) +
          " | per-block checkpointing | ORT level 1 | ORT level 2 | exact reference (HiGHS) |")
    print("|---|---|---|" + "---|" * (len(MODELS) + 4))
    frontiers = []  # (graph, [(label, [(peak, seconds), ...])])
    for name, model, dims, record in GRAPHS:
        if model.startswith("grad:"):
            source = os.path.join(ROOT, model[len("grad:"):])
            if not os.path.exists(source):
                print(f"bench_remat: {source} is absent; skipped", file=sys.stderr)
                continue
            path = os.path.join(work, os.path.basename(os.path.dirname(source)) + "_train.onnx")
            run([args.memopt, "-qq", "grad", source, "-o", path])
        else:
            path = os.path.join(ROOT, model)
        dim_args = ["--dims", dims] if dims else []
        cells, refs = [], None
        base = steps = None
        curves = []
        for label, flags in MODELS:
            began = time.monotonic()
            out = json.loads(run([args.memopt, "-qq", "plan", path, "--ops", "extended", "--sweep", "--sweep-points",
                                  str(args.points), "--format", "json", "-o", "-"] + dim_args + flags))
            seconds = time.monotonic() - began
            base = out["unoptimized_peak"]
            lowest = min(out["points"], key=lambda p: p["peak"])
            cells.append(f"{cell(lowest['peak'], lowest['added_seconds_estimate'], base)} ({seconds:.1f} s)")
            refs = {r["label"]: r for r in out["references"]}
            curves.append((label, sorted({(p["peak"], p["added_seconds_estimate"]) for p in out["points"]},
                                         reverse=True)))
        scan = json.loads(run([args.memopt, "-qq", "scan", path, "--ops", "extended", "--format", "json"] + dim_args))
        steps = scan["model"]["nodes"]
        ref_cells = []
        for label in ("per-block checkpointing", "ORT level 1", "ORT level 2"):
            r = refs.get(label)
            ref_cells.append(cell(r["peak"], r["added_seconds_estimate"], base) if r else "-")
        for label in ("per-block checkpointing", "ORT level 1", "ORT level 2"):
            r = refs.get(label)
            if r:
                curves.append((label, [(r["peak"], r["added_seconds_estimate"])]))
        exact = "-"
        if record:
            with open(os.path.join(ROOT, "tests", "data", "remat_reference", record + ".json")) as f:
                rec = json.load(f)
            lowest = next(t for t in rec["targets"] if t["target"] == "lowest")
            ref = lowest["reference"]
            if ref:
                bound = ref.get("bound")
                proof = "optimal" if ref["optimal"] else (f"bound {change(bound, base)}" if bound else "no bound")
                exact = f"{cell(ref['peak'], ref['added_seconds'], base)} ({proof})"
            # The reference's frontier: its schedule at every target it meets.
            curves.append(("exact reference", sorted({(t["reference"]["peak"], t["reference"]["added_seconds"])
                                                      for t in rec["targets"] if t["reference"]}, reverse=True)))
        frontiers.append((name, base, curves))
        print(f"| {name} | {steps} | {base:,} B | " + " | ".join(cells) + " | " + " | ".join(ref_cells) +
              f" | {exact} |")
    # The frontiers: every point of each model's sweep (peak change, added compute), highest peak first.
    print()
    print(f"Frontiers (`--sweep-points {args.points}`; peak change / added compute, highest peak first):")
    print()
    print("| graph | model | frontier |")
    print("|---|---|---|")
    for name, base, curves in frontiers:
        for label, points in curves:
            print(f"| {name} | {label} | " + "; ".join(f"{change(p, base)} / {t * 1e6:.2f} us" for p, t in points) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
