#!/usr/bin/env python3
"""The exact reference of the general rematerialization problem, solved by HiGHS.

For each test graph and each target (the lowest peak, and budgets of 0.95, 0.9, 0.8 and 0.7 of the
unoptimized peak), `memopt_remat_reference write` writes the Checkmate program over memopt's own
step order and byte accounting (plan/remat_reference.h) and memopt's own plan for the target as
the solver's start; HiGHS solves it within a time limit; `memopt_remat_reference check` replays the
schedule HiGHS found through memopt's accounting. The records (tests/data/remat_reference/*.json)
hold, per target: memopt's plan (peak, added seconds), the reference's best schedule, its peak and
added seconds, and the solver's bound and whether it proved optimality. The unit test
plan/remat_reference_record_test.cc replays every recorded schedule and compares memopt's current
plans against them.

Needs highspy (pip install highspy; a test oracle, not a build dependency):
  scripts/remat_reference.py --tool build/tests/memopt_remat_reference --out tests/data/remat_reference \
      [--time-limit 120] [--only NAME ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# name, model (relative to the repository, or "shared:" the shared data), dims, op table
CASES = [
    ("relu_mlp", "tests/data/plan/relu_mlp_train.onnx", "batch=4", "extended"),
    ("peak_raising", "tests/data/plan/peak_raising_level1.onnx", "", "extended"),
    ("tanh_mlp", "tests/data/plan/tanh_mlp_train.onnx", "", "extended"),
    ("convnet_residual", "tests/data/plan/convnet_residual_train.onnx", "", "extended"),
    ("convnet_bn", "tests/data/plan/convnet_bn_train.onnx", "batch=2", "extended"),
    ("ort_recompute_gelu", "shared:ort_recompute/recompute_gelu.onnx", "input1_dim0=16,input1_dim1=784", "ort"),
    ("ort_recompute_tile", "shared:ort_recompute/recompute_tile.onnx",
     "input1_dim0=24,input1_dim1=16,query_layer_dim2=64,query_layer_dim0=48,query_layer_dim1=16", "ort"),
]
TARGETS = ["lowest", "0.95", "0.9", "0.8", "0.7"]


def tool(args, *argv):
    run = subprocess.run([args.tool, *argv], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])}: {run.stderr.strip()}")
    return json.loads(run.stdout)


def solve(mps, start, time_limit):
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 1e-6)
    h.readModel(mps)
    lp = h.getLp()
    names = list(lp.col_names_)
    if start and os.path.exists(start):
        values = {}
        with open(start) as f:
            for line in f:
                name, value = line.split()
                values[name] = float(value)
        sol = highspy.HighsSolution()
        sol.col_value = [values.get(n, 0.0) for n in names]
        sol.value_valid = True
        h.setSolution(sol)
    began = time.time()
    h.run()
    seconds = time.time() - began
    info = h.getInfo()
    status = h.modelStatusToString(h.getModelStatus())
    if info.primal_solution_status == 0:
        return None, status, info.mip_dual_bound, seconds
    x = h.getSolution().col_value
    stages = {}
    for name, value in zip(names, x):
        if name.startswith("R_") and value > 0.5:
            t, i = map(int, name[2:].split("_"))
            stages.setdefault(t, []).append(i)
    return stages, status, info.mip_dual_bound, seconds


def run_case(args, name, model, dims, ops):
    if model.startswith("shared:"):
        model = os.path.join(args.shared, model[len("shared:"):])
        if not os.path.exists(model):
            print(f"{name}: skipped (no shared data)", file=sys.stderr)
            return None
    record = {"name": name, "model": model if not os.path.isabs(model) else os.path.relpath(model, args.shared),
              "shared": os.path.isabs(model), "dims": dims, "ops": ops, "targets": []}
    with tempfile.TemporaryDirectory() as tmp:
        for target in TARGETS:
            mps, start = os.path.join(tmp, "p.mps"), os.path.join(tmp, "p.start")
            written = tool(args, "write", model, dims, ops, target, mps, start)
            record["steps"] = written["steps"]
            record["unoptimized_peak"] = written["unoptimized_peak"]
            memopt = written["memopt"]
            stages, status, bound, seconds = solve(mps, start if written["program"]["start_written"] else None,
                                                   args.time_limit)
            entry = {"target": target, "budget": written["budget"],
                     "memopt": {"met": memopt["met"], "peak": memopt["peak"], "added_seconds": memopt["added_seconds"],
                                "reference_peak": memopt["reference_peak"]},
                     "solver": {"status": status, "seconds": round(seconds, 1), "time_limit": args.time_limit}}
            scale = written["program"]["objective_scale"]
            if stages is None:
                entry["reference"] = None
            else:
                schedule = [sorted(stages.get(t, [])) for t in range(written["steps"])]
                path = os.path.join(tmp, "s.json")
                with open(path, "w") as f:
                    json.dump(schedule, f)
                replay = tool(args, "check", model, dims, ops, path)
                entry["reference"] = {"peak": replay["peak"], "added_seconds": replay["added_seconds"],
                                      "recomputations": replay["recomputations"], "optimal": status == "Optimal",
                                      "schedule": {str(t): s for t, s in sorted(stages.items())}}
                # The bound: bytes below which no peak exists (lowest), or seconds below which no plan
                # meets the budget.
                finite = scale and bound == bound and abs(bound) != float("inf")
                entry["reference"]["bound"] = ((int(bound / scale) if target == "lowest" else bound / scale)
                                               if finite else None)
            record["targets"].append(entry)
            ref = entry["reference"]
            print(f"{name} {target}: memopt peak {memopt['peak']} ({memopt['added_seconds']:.3g} s), reference "
                  + (f"peak {ref['peak']} ({ref['added_seconds']:.3g} s) {status} bound {ref['bound']}"
                     if ref else status) + f" in {seconds:.0f} s", file=sys.stderr)
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    parser.add_argument("--time-limit", type=float, default=120)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    try:
        import highspy  # noqa: F401
    except ImportError:
        print("remat_reference.py: needs highspy (pip install highspy)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    for name, model, dims, ops in CASES:
        if args.only and name not in args.only:
            continue
        record = run_case(args, name, model, dims, ops)
        if record is None:
            continue
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
