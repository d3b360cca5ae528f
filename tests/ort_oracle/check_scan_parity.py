#!/usr/bin/env python3
"""`memopt scan` against ONNX Runtime 1.19.2's memory optimizer analysis, graph by graph.

For each training graph (forward + YieldOp + backward):
  1. ORT opens it as ORTModule does (CPU provider, MEMORY_EFFICIENT execution order, pre-packing
     off; graph optimizations up to ORT_ENABLE_EXTENDED) and saves the graph its session analyses
     (its CPU session may insert Casts around fp16 ops, fold constants and fuse ops first);
  2. ORT's analysis runs on that session through the TrainingAgent (what ORTModule calls):
     get_serialized_ortmodule_memory_stat("", probe, True) with probes "1:1" and "0:0"; its
     MemoryInsight table lists, per row, a frequency and the options (Recompute = type 1,
     RecomputeWithCompromise = type 2) of the nodes it clusters;
  3. `memopt scan --level 2` of the saved graph must list the same (cluster id, type) pairs with the
     same total frequencies as probe "1:1", `--level 1` its type-1 ones, and `--level 0` the type-1
     ones of probe "0:0"; each id's Saving Symbolic must equal
     the sum over ORT's rows of freq x stashed bytes x percent saved, with every dim at 3, 7 and 16
     (ids whose sizes ORT does not know or has unnamed dims in, which the two name differently, are
    left out).
The dict the same call returns is not compared: it folds in the buffer-reuse plan and changes from
run to run. Accepted differences are listed in ACCEPTED with their reason (none so far).

    check_scan_parity.py MEMOPT WORK_DIR MODEL[=INPUTS_DIR] [...]
"""
import collections
import csv
import json
import math
import os
import re
import subprocess
import sys

import onnx
import onnxruntime as ort
from onnxruntime.capi import _pybind_state as C

# (graph file name, "cluster:type:-1") -> why memopt differs from ORT there, on purpose.
ACCEPTED = {}

# Gradient ops ORT's CPU provider has no kernel for (docs/grad.md): memopt's recurrent gradients,
# which recompute the forward (ai.memopt), and ResizeGrad (CUDA only in ORT). ORT cannot open a
# graph with them, so there is nothing to compare; such graphs are listed as skipped.
NOT_ON_ORT_CPU = {("ai.memopt", "LSTMGrad"), ("ai.memopt", "GRUGrad"), ("ai.memopt", "RNNGrad"),
                  ("com.microsoft", "ResizeGrad")}


def ort_analysis(model, saved, probes=("1:1",)):
    """ORT's MemoryInsight table text for `model` per probe config ("<op level>:<layer boundary>");
    the analysed graph is written to `saved`."""
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
    return [agent.get_serialized_ortmodule_memory_stat("", probe, True)[0] for probe in probes]


def parse_insight(table):
    """({"cluster:type:-1": total frequency}, {"cluster:type:-1": [(freq, [(bytes expr, byte/elem,
    percent saved) per stashed output])]}) from ORT's MemoryInsight table."""
    counts = collections.Counter()
    savings = collections.defaultdict(list)
    freq, current = None, None
    for line in table.splitlines():
        row = re.match(r"\|(\d+)\s+\|", line)
        if row:
            freq, current = int(row.group(1)), None
            continue
        option = re.search(r">>Option \d+\s+: (Recompute|RecomputeWithCompromise) subgraph (\S+)", line)
        if option and freq is not None:
            current = f"{option.group(2)}:{1 if option.group(1) == 'Recompute' else 2}:-1"
            counts[current] += freq
            savings[current].append((freq, []))
            continue
        output = re.search(r"- Output \d+\s+: \[(.*)\], byte/elem: (\d+), (\d+)% saved", line)
        if output and current is not None:
            savings[current][-1][1].append((output.group(1), int(output.group(2)), int(output.group(3))))
    return counts, savings


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FUNCTIONS = {"floor", "ceiling", "Max", "Min", "Mod"}


def evaluate(expr, dims):
    """Value of a polynomial printed by ORT or memopt ('**', '*', '+', '-', parentheses)."""
    if not re.fullmatch(r"[A-Za-z0-9_.*+\-/(), ]*", expr):
        raise ValueError(f"unexpected characters in {expr!r}")
    functions = {"floor": math.floor, "ceiling": math.ceil, "Max": max, "Min": min, "Mod": lambda a, b: a % b}
    return eval(expr, {"__builtins__": {}, **functions}, dims)  # noqa: S307 - checked above: arithmetic only


def dims_from_shapes(shapes):
    """{"args_<i>_dim<j>": size} for ORTModule's input dims, from the recorded input shapes."""
    return {f"args_{i}_dim{j}": d for i, shape in enumerate(shapes or []) for j, d in enumerate(shape)}


def compare_savings(name, ours, theirs, recorded=None):
    """memopt's Saving Symbolic column against ORT's per-output byte counts, every dim at 3, 7 and
    16; ids whose sizes involve unnamed dims (ORT's empty_dim_param<n>, memopt's unk__<n>)
    and ORT's "[unknown]" sizes are skipped."""
    problems, compared = [], 0
    for key, rows in theirs.items():
        if key not in ours:
            continue
        texts = [ours[key]] + [e for _, outs in rows for e, _, _ in outs]
        names = {n for t in texts for n in IDENTIFIER.findall(t)} - FUNCTIONS
        # Unnamed dims, and dims ORT's symbolic shape inference creates for op outputs
        # ("Pad_495_o0__d1"), are named differently by the two.
        if any(n.startswith(("empty_dim_param", "unk__")) or n == "unknown" or re.search(r"_o\d+__d\d+$", n)
               for n in names):
            continue
        compared += 1
        # Every dim at the same value: ORT's and memopt's inference may name a dim the graph ties to
        # another (labels' batch or input_ids' batch) differently.
        # With recorded input shapes (ORTModule's graphs), at those sizes and twice the batch: image
        # sizes enter through floor/ceiling, which agree only where the sizes are valid.
        assignments = ([{**{n: 16 for n in names}, **recorded},
                        {**{n: 16 for n in names}, **recorded, **{k: 2 * v for k, v in recorded.items() if k.endswith("_dim0")}}]
                       if recorded else [{n: value for n in names} for value in (3, 7, 16)])
        for dims in assignments:
            want = sum(freq * evaluate(e, dims) * per_elem * percent / 100.0 for freq, outs in rows
                       for e, per_elem, percent in outs)
            got = evaluate(ours[key], dims)
            if abs(got - want) > 1e-9 * max(1.0, abs(want)):
                problems.append(f"{key}: saving {ours[key]} = {got} vs ORT {want} at dims {dims}")
                break
    return problems, compared


def memopt_table(memopt, model, level):
    """({config: freq}, {config: Saving Symbolic}) of `memopt scan --level`."""
    run = subprocess.run([memopt, "-qq", "scan", model, "--level", str(level), "--format", "csv"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"memopt scan --level {level}: exit {run.returncode}: {run.stderr.strip()}")
    counts, savings = collections.Counter(), {}
    for config, freq, _, symbolic in list(csv.reader(run.stdout.splitlines()))[1:]:
        counts[config] += int(freq)
        savings[config] = symbolic
    return counts, savings


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


def rewrite_summary(path):
    """(node count, clone op types, backward reads of recomputed tensors, clone node names) of a
    rewritten graph."""
    proto = onnx.load(path, load_external_data=False)
    clone_nodes = [n for n in proto.graph.node if any(o.endswith("_recompute") for o in n.output)]
    clones = collections.Counter(n.op_type for n in clone_nodes)
    reads = sorted((n.name, i, x) for n in proto.graph.node for i, x in enumerate(n.input)
                   if x.endswith("_recompute") and not any(o.endswith("_recompute") for o in n.output))
    # The clone of an unnamed node: ORT names it "_recompute", memopt "<output 0>_recompute" (unique
    # names; docs/plan.md). Compared as ORT's name.
    producer = {o: n for n in proto.graph.node for o in n.output}

    def clone_name(node):
        original = producer.get(node.output[0][: -len("_recompute")])
        return "_recompute" if original is not None and not original.name else node.name

    return len(proto.graph.node), clones, reads, sorted(clone_name(n) for n in clone_nodes)


def compare_rewrite(memopt, saved, work, level):
    """ORT's rewrite and `memopt apply` of memopt's level config: the same node count, clone op
    types and backward reads of the recomputed tensors. Returns (problems, note)."""
    base = os.path.join(work, os.path.basename(saved).replace(".onnx", f".level{level}"))
    config = base + ".json"
    subprocess.run([memopt, "-qq", "plan", saved, "--level", str(level), "-o", config], capture_output=True,
                   check=True)
    subprocess.run([memopt, "-qq", "apply", saved, "--config", config, "-o", base + ".memopt.onnx"],
                   capture_output=True, check=True)
    options = ort.SessionOptions()
    options.add_session_config_entry("optimization.memory_optimizer_config", config)
    options.add_session_config_entry("optimization.enable_memory_probe_recompute_config", "1:1")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.optimized_model_filepath = base + ".ort.onnx"
    options.log_severity_level = 3
    try:
        ort.InferenceSession(saved, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        if "two nodes with same node name" in str(e):
            # ORT names every clone of an unnamed node "_recompute" and then refuses its own
            # rewrite (docs/ort.md); memopt's clones have unique names, so there is nothing to compare.
            return [], f"level {level}: ORT refuses its own rewrite (duplicate '_recompute' names)"
        raise
    theirs, ours = rewrite_summary(base + ".ort.onnx"), rewrite_summary(base + ".memopt.onnx")
    problems = []
    if ours[0] != theirs[0]:
        problems.append(f"level {level} rewrite: {ours[0]} nodes, ORT {theirs[0]}")
    if ours[1] != theirs[1]:
        problems.append(f"level {level} clones: memopt {dict(ours[1])}, ORT {dict(theirs[1])}")
    if ours[2] != theirs[2]:
        diff = sorted(set(ours[2]) ^ set(theirs[2]))[:3]
        problems.append(f"level {level} backward reads of clones differ, e.g. {diff}")
    if ours[3] != theirs[3]:  # ORT here wrote no two clones of one name (it refuses those graphs)
        diff = sorted(set(ours[3]) ^ set(theirs[3]))[:3]
        problems.append(f"level {level} clone names differ, e.g. {diff}")
    return problems, f"level {level}: {sum(ours[1].values())} clones as ORT's"


def without_yield(path, out):
    """The graph with its YieldOp removed: the YieldOp outputs (the gradients of the module outputs)
    become graph inputs. None when a module output is not a scalar (only a loss is fed as 1)."""
    proto = onnx.load(path, load_external_data=False)
    yields = [n for n in proto.graph.node if n.op_type == "YieldOp"]
    if len(yields) != 1:
        return None
    types = {v.name: v.type for v in list(proto.graph.value_info) + list(proto.graph.output) + list(proto.graph.input)}
    for module_output, grad in zip(yields[0].input, yields[0].output):
        t = types.get(module_output)
        if t is None or len(t.tensor_type.shape.dim) != 0:
            return None
        proto.graph.input.append(onnx.helper.make_value_info(grad, t))
    proto.graph.node.remove(yields[0])
    onnx.save(proto, out)
    return [g for g in yields[0].output if g]


def run_ort(path, feeds):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})))


def feeds_for(path, grads, inputs_dir, shapes=None):
    """Inputs of a training graph: the fixture's when it has them, else ones (valid token ids,
    masks and labels) and seeded random floats, of the recorded shapes for ORTModule's inputs
    args_<i> (`shapes`, in order) and 4 for other unknown dims; each loss gradient is 1."""
    import numpy as np
    import onnx.numpy_helper
    proto = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in proto.graph.initializer}
    given = {}
    if inputs_dir and os.path.isdir(inputs_dir):
        files = sorted(os.listdir(inputs_dir))
        for f in files:
            tensor = onnx.load_tensor(os.path.join(inputs_dir, f))
            given[tensor.name] = onnx.numpy_helper.to_array(tensor)
    rng = np.random.default_rng(0)
    feeds = {}
    for value in proto.graph.input:
        if value.name in initializers:
            continue
        t = value.type.tensor_type
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if value.name in grads:
            feeds[value.name] = np.ones((), dtype=dtype)
        elif value.name in given:
            feeds[value.name] = given[value.name]
        else:
            arg = re.fullmatch(r"args_(\d+)", value.name)
            if arg and shapes and int(arg.group(1)) < len(shapes):
                shape = shapes[int(arg.group(1))]
            else:
                shape = [d.dim_value if d.dim_value > 0 else 4 for d in t.shape.dim]
            feeds[value.name] = (np.ones(shape, dtype=dtype) if np.issubdtype(dtype, np.integer) or dtype == bool
                                 else rng.standard_normal(shape).astype(dtype))
    return feeds


def recorded_shapes(model):
    """The input shapes scripts/export_ortmodule_graphs.py recorded beside an ORTModule graph (in
    the order of its inputs args_0, args_1, ...), or None."""
    path = os.path.join(os.path.dirname(model), "manifest.json")
    if not os.path.exists(path):
        return None
    inputs = json.load(open(path)).get("inputs")
    return list(inputs.values()) if isinstance(inputs, dict) else None


def compare_runs(saved, rewritten, work, inputs_dir, shapes):
    """ORT runs the analysed graph and memopt's rewrite (YieldOp removed, loss gradient fed as 1):
    every output must be equal. Returns (problems, note)."""
    import numpy as np
    base = os.path.join(work, os.path.basename(rewritten).replace(".onnx", ""))
    if any(n.op_type == "ATen" for n in onnx.load(saved, load_external_data=False).graph.node):
        return [], "runs: skipped (ATen ops need ORTModule's PyTorch extension to run)"
    grads = without_yield(saved, base + ".orig_noyield.onnx")
    if grads is None or without_yield(rewritten, base + ".noyield.onnx") is None:
        return [], "runs: skipped (a module output is not a scalar loss)"
    feeds = feeds_for(base + ".orig_noyield.onnx", set(grads), inputs_dir, shapes)
    want = run_ort(base + ".orig_noyield.onnx", feeds)
    got = run_ort(base + ".noyield.onnx", feeds)
    problems = []
    for name, value in want.items():
        if name not in got or not np.array_equal(got[name], value, equal_nan=True):
            problems.append(f"ORT's run of memopt's rewrite differs from the original at output {name!r}")
    return problems, f"ORT runs memopt's rewrite: {len(want)} outputs equal"


def effective_config(path):
    """{cluster id: type} that ORT applies from a config file (an id's later entry wins)."""
    applied = {}
    for element in json.load(open(path)):
        for entry in filter(None, element.split(",")):
            cluster, kind, _ = entry.rsplit(":", 2)
            applied[cluster] = kind
    return applied


def compare_level_configs(memopt, saved, work, recorded_dir):
    """`memopt plan --level 1|2` on the graph ORT analysed against the config ORTModule applied at
    that level (ortmodule_level<n>.json, recorded by scripts/export_ortmodule_graphs.py)."""
    problems, compared = [], 0
    for level in (1, 2):
        recorded = os.path.join(recorded_dir, f"ortmodule_level{level}.json")
        if not os.path.exists(recorded):
            continue
        ours = os.path.join(work, os.path.basename(saved).replace(".onnx", f".plan{level}.json"))
        subprocess.run([memopt, "-qq", "plan", saved, "--level", str(level), "-o", ours], capture_output=True,
                       check=True)
        theirs, mine = effective_config(recorded), effective_config(ours)
        if theirs != mine:
            diff = {k: (mine.get(k), theirs.get(k)) for k in sorted(set(theirs) | set(mine)) if theirs.get(k) != mine.get(k)}
            problems.append(f"plan --level {level} differs from ORTModule's config (memopt, ORTModule): {diff}")
        compared += 1
    return problems, compared


def main():
    memopt, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    failed = False
    for arg in sys.argv[3:]:
        model, _, inputs_dir = arg.partition("=")  # MODEL[=folder of its inputs]
        shapes = recorded_shapes(model)
        name = os.path.basename(model)
        if name == "optimized_training.onnx":  # tests/data/ortmodule_graphs/<model>/
            name = os.path.basename(os.path.dirname(model)) + "_" + name
        saved = os.path.join(work, name.replace(".onnx", "") + ".ort_analysed.onnx")
        graph = onnx.load(model, load_external_data=False).graph
        missing = sorted({f"{n.domain}::{n.op_type}" for n in graph.node if (n.domain, n.op_type) in NOT_ON_ORT_CPU})
        if missing:
            print(f"skip {name}: ORT's CPU provider cannot open it ({', '.join(missing)})")
            continue
        try:
            advanced, basic = ort_analysis(model, saved, ("1:1", "0:0"))
            insight, ort_savings = parse_insight(advanced)
            type1 = collections.Counter({k: v for k, v in insight.items() if k.endswith(":1:-1")})
            basic1 = collections.Counter({k: v for k, v in parse_insight(basic)[0].items() if k.endswith(":1:-1")})
            level2, level2_savings = memopt_table(memopt, saved, 2)
            problems = compare(name, level2, insight, "level 2")
            problems += compare(name, memopt_table(memopt, saved, 1)[0], type1, "level 1")
            problems += compare(name, memopt_table(memopt, saved, 0)[0], basic1, "level 0 = probe 0:0")
            recorded = dims_from_shapes(shapes) if shapes else None
            saving_problems, compared = compare_savings(name, level2_savings, ort_savings, recorded)
            problems += saving_problems
            rewrite_notes = []
            for level in (1, 2):
                rewrite_problems, note = compare_rewrite(memopt, saved, work, level)
                problems += rewrite_problems
                rewrite_notes.append(note)
            level2_rewrite = os.path.join(work, os.path.basename(saved).replace(".onnx", ".level2.memopt.onnx"))
            run_problems, note = compare_runs(saved, level2_rewrite, work, inputs_dir, shapes)
            problems += run_problems
            rewrite_notes.append(note)
            config_problems, configs = compare_level_configs(memopt, saved, work, os.path.dirname(model))
            problems += config_problems
            if configs:
                rewrite_notes.append(f"plan --level 1/2 = ORTModule's configs ({configs})")
        except Exception as e:  # noqa: BLE001 - reported with the graph
            failed = True
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            continue
        if problems:
            failed = True
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            print(f"ok {name}: {len(insight)} cluster ids ({sum(insight.values())} plans) as ORT at levels 0, 1, 2; "
                  f"savings of {compared} equal; rewrites: {'; '.join(rewrite_notes)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
