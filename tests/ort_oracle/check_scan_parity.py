#!/usr/bin/env python3
"""`memopt scan` against ONNX Runtime 1.19.2's memory optimizer analysis, graph by graph.

For each training graph (forward + YieldOp + backward):
  1. ORT opens it as ORTModule does (CPU provider, MEMORY_EFFICIENT execution order, pre-packing
     off; graph optimizations up to ORT_ENABLE_EXTENDED) and saves the graph its session analyses
     (its CPU session may insert Casts around fp16 ops, fold constants and fuse ops first);
  2. ORT's analysis runs on that session through the TrainingAgent (what ORTModule calls):
     get_serialized_ortmodule_memory_stat("", "1:1", True); its MemoryInsight table lists, per
     row, a frequency and the options (Recompute = type 1, RecomputeWithCompromise = type 2) of
     the nodes it clusters;
  3. `memopt scan --level 2` of the saved graph must list the same (cluster id, type) pairs with the
     same total frequencies, and `--level 1` the type-1 ones.
The dict the same call returns is not compared: it folds in the buffer-reuse plan and changes from
run to run. Accepted differences are listed in ACCEPTED with their reason (none so far).

    check_scan_parity.py MEMOPT WORK_DIR MODEL [MODEL ...]
"""
import collections
import os
import re
import subprocess
import sys

import onnx
import onnxruntime as ort
from onnxruntime.capi import _pybind_state as C

# (graph file name, "cluster:type:-1") -> why memopt differs from ORT there, on purpose.
ACCEPTED = {}


def ort_analysis(model, saved):
    """ORT's MemoryInsight table text for `model`; the analysed graph is written to `saved`."""
    proto = onnx.load(model, load_external_data=False)
    yields = [n for n in proto.graph.node if n.op_type == "YieldOp"]
    if len(yields) != 1:
        raise RuntimeError(f"{model}: {len(yields)} YieldOp nodes (one expected)")
    forward_outputs = list(yields[0].input)
    initializers = {t.name for t in proto.graph.initializer}
    feeds = [i.name for i in proto.graph.input if i.name not in initializers]
    grads = [o.name for o in proto.graph.output if o.name not in forward_outputs]
    options = ort.SessionOptions()
    options.execution_order = ort.ExecutionOrder.MEMORY_EFFICIENT
    options.add_session_config_entry("session.disable_prepacking", "1")
    # Without ORT_ENABLE_ALL's NCHWc layout rewrite, which only ORT's CPU provider does (ORTModule
    # trains on GPUs) and whose com.microsoft.nchwc ops memopt has no shape rules for.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = saved
    options.log_severity_level = 3
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    cpu = C.OrtDevice(C.OrtDevice.cpu(), C.OrtDevice.default_memory(), 0)
    agent = C.TrainingAgent(session._sess, feeds, [cpu] * len(forward_outputs), grads, [cpu] * len(grads), 0)
    table, _ = agent.get_serialized_ortmodule_memory_stat("", "1:1", True)
    return table


def parse_insight(table):
    """{"cluster:type:-1": total frequency} from ORT's MemoryInsight table."""
    counts = collections.Counter()
    freq = None
    for line in table.splitlines():
        row = re.match(r"\|(\d+)\s+\|", line)
        if row:
            freq = int(row.group(1))
            continue
        option = re.search(r">>Option \d+\s+: (Recompute|RecomputeWithCompromise) subgraph (\S+)", line)
        if option and freq is not None:
            counts[f"{option.group(2)}:{1 if option.group(1) == 'Recompute' else 2}:-1"] += freq
    return counts


def memopt_table(memopt, model, level):
    run = subprocess.run([memopt, "-qq", "scan", model, "--level", str(level), "--format", "csv"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"memopt scan --level {level}: exit {run.returncode}: {run.stderr.strip()}")
    counts = collections.Counter()
    for line in run.stdout.splitlines()[1:]:
        config, freq = line.split(",")[:2]
        counts[config] += int(freq)
    return counts


def compare(name, ours, theirs, what):
    problems = []
    for key in sorted(set(ours) | set(theirs)):
        if ours.get(key, 0) == theirs.get(key, 0):
            continue
        reason = ACCEPTED.get((name, key))
        line = f"{key}: memopt {ours.get(key, 0)}, ORT {theirs.get(key, 0)} ({what})"
        if reason:
            print(f"  accepted {line}: {reason}")
        else:
            problems.append(line)
    return problems


def main():
    memopt, work, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    failed = False
    for model in models:
        name = os.path.basename(model)
        saved = os.path.join(work, name.replace(".onnx", "") + ".ort_analysed.onnx")
        try:
            insight = parse_insight(ort_analysis(model, saved))
            type1 = collections.Counter({k: v for k, v in insight.items() if k.endswith(":1:-1")})
            problems = compare(name, memopt_table(memopt, saved, 2), insight, "level 2")
            problems += compare(name, memopt_table(memopt, saved, 1), type1, "level 1")
        except Exception as e:  # noqa: BLE001 - reported with the graph
            failed = True
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            continue
        if problems:
            failed = True
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            print(f"ok {name}: {len(insight)} cluster ids ({sum(insight.values())} plans) as ORT at levels 1 and 2")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
