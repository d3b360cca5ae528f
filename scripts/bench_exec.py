#!/usr/bin/env python3
"""memopt's CPU executor against ONNX Runtime (CPU provider) and PyTorch eager, on the same models.

The models are the held-out-style modules of scripts/export_torch_fixtures.py (GPT-2-, BERT-,
ResNet-style and an MLP with a loss) and a 2-layer LSTM and GRU language model, scaled up to
benchmark sizes. For each module:
  forward   the torch.onnx.export graph (opset 17), run as it is;
            PyTorch: the module's forward under torch.no_grad().
  grad      `memopt grad` of that export: forward + backward in one graph. Its YieldOp (which ORT
            runs only inside ORTModule) is replaced by graph inputs carrying the same incoming
            gradients (1 for the scalar loss), and memopt and ORT both run that graph;
            PyTorch: zero_grad + forward + backward.
memopt runs `memopt bench --inputs DIR --threads t --format json` (the whole step), ORT
an InferenceSession (all graph optimisations, intra-op threads t, sequential), PyTorch with
torch.set_num_threads(t); all on the same input tensors. Each figure is the median over --rounds
rounds of the median over --iters iterations (after warm-up; more iterations for steps shorter
than --min-round-ms / --iters, the same count for every runtime); each round runs every thread
count and runtime in turn. The table gives
milliseconds and the ratios memopt / ORT and memopt / PyTorch, and memopt's own speedup from one
thread to the largest thread count. ORT's columns are '-' on a graph it cannot run (the
recurrent steps, whose LSTMGrad/GRUGrad are memopt's own ops).

With --sweep, the GPT-style case over the shapes of SWEEP (hidden 64-1024, heads 2-16, seq 32-1024,
batch 1-512), forward and training step at each.

Usage: scripts/bench_exec.py [--memopt build/tools/memopt] [--threads 1,2] [--cases gpt2,bert,cnn,mlp,lstm,gru]
       scripts/bench_exec.py --sweep [--points 0,3]
Needs onnxruntime-training (or onnxruntime), torch, onnx and numpy (scripts/bench_exec.sh makes a venv).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_torch_fixtures as fx  # noqa: E402  (the module definitions; sizes are set below)


# The shape sweep: (hidden, heads, layers, batch, seq), from many short rows and small matrices
# (hidden 64, 4 heads of 16: the shape where one BLAS call per matrix and short softmax rows cost
# most) to long sequences and wide layers; about 1-25k tokens each, so that every point runs in
# seconds on two cores.
SWEEP = [
    (64, 4, 3, 384, 64),
    (64, 2, 2, 512, 32),
    (128, 4, 2, 64, 128),
    (256, 16, 2, 128, 32),
    (256, 8, 2, 16, 256),
    (512, 8, 2, 4, 512),
    (768, 12, 2, 8, 128),
    (1024, 16, 2, 1, 1024),
]
SWEEP_VOCAB = 256


def set_sweep_point(point):
    hidden, heads, layers, batch, seq = point
    fx.HIDDEN, fx.HEADS, fx.LAYERS, fx.BATCH, fx.SEQ, fx.VOCAB = hidden, heads, layers, batch, seq, SWEEP_VOCAB
    return f"h{hidden} a{heads} L{layers} b{batch} s{seq}"


def set_sizes(size):
    """Benchmark sizes (the fixtures' are tiny, for tests)."""
    global RNN_HIDDEN
    RNN_HIDDEN = 64 if size == "small" else 256
    if size == "small":  # a quick dry run
        fx.SEQ, fx.BATCH, fx.VOCAB, fx.HIDDEN, fx.HEADS, fx.LAYERS = 32, 2, 200, 64, 4, 2
        fx.CNN_CHANNELS, fx.CNN_CLASSES = 8, 10
        fx.MLP_IN, fx.MLP_HIDDEN, fx.MLP_OUT = 64, 128, 10
        return {"cnn_batch": 4, "cnn_hw": 16, "mlp_batch": 16}
    fx.SEQ, fx.BATCH, fx.VOCAB, fx.HIDDEN, fx.HEADS, fx.LAYERS = 128, 8, 2000, 256, 4, 2
    fx.CNN_CHANNELS, fx.CNN_CLASSES = 32, 10
    fx.MLP_IN, fx.MLP_HIDDEN, fx.MLP_OUT = 784, 1024, 10
    return {"cnn_batch": 16, "cnn_hw": 32, "mlp_batch": 128}


class RnnLM(torch.nn.Module):
    """Embedding, a 2-layer LSTM or GRU (batch first), a vocabulary head and cross-entropy: the
    recurrent case (memopt's own LSTMGrad/GRUGrad in the step, which ORT cannot run)."""

    def __init__(self, cell):
        super().__init__()
        self.embed = torch.nn.Embedding(fx.VOCAB, RNN_HIDDEN)
        self.rnn = cell(RNN_HIDDEN, RNN_HIDDEN, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(RNN_HIDDEN, fx.VOCAB)

    def forward(self, input_ids, labels):
        h, _ = self.rnn(self.embed(input_ids))
        return torch.nn.functional.cross_entropy(self.head(h).flatten(0, 1), labels.flatten())


RNN_HIDDEN = 256


class MlpLoss(torch.nn.Module):
    """The fixtures' MLP with a cross-entropy loss, so that its step is a training step."""

    def __init__(self):
        super().__init__()
        self.mlp = fx.Mlp()

    def forward(self, x, labels):
        return torch.nn.functional.cross_entropy(self.mlp(x), labels)


def cases(extra):
    g = torch.Generator().manual_seed(1234)
    b, t, v = fx.BATCH, fx.SEQ, fx.VOCAB
    ids = torch.randint(0, v, (b, t), generator=g)
    labels = torch.randint(0, v, (b, t), generator=g)
    mlm = labels.clone()
    mlm[:, ::3] = -100
    token_types = (torch.arange(t)[None, :] >= t // 2).long().repeat(b, 1)
    mask = torch.ones(b, t, dtype=torch.long)
    mask[1:, -t // 4:] = 0
    hw = extra["cnn_hw"]
    return {
        "gpt2": (fx.Gpt2, {"input_ids": ids, "labels": labels}, False),
        "bert": (fx.Bert, {"input_ids": ids, "token_type_ids": token_types, "attention_mask": mask,
                           "labels": mlm}, False),
        "cnn": (fx.Cnn, {"images": torch.randn(extra["cnn_batch"], 3, hw, hw, generator=g),
                         "labels": torch.randint(0, fx.CNN_CLASSES, (extra["cnn_batch"],), generator=g)}, True),
        "lstm": (lambda: RnnLM(torch.nn.LSTM), {"input_ids": ids, "labels": labels}, False),
        "gru": (lambda: RnnLM(torch.nn.GRU), {"input_ids": ids, "labels": labels}, False),
        "mlp": (MlpLoss, {"x": torch.randn(extra["mlp_batch"], fx.MLP_IN, generator=g),
                          "labels": torch.randint(0, fx.MLP_OUT, (extra["mlp_batch"],), generator=g)}, False),
    }


def save_inputs(folder, arrays):
    os.makedirs(folder, exist_ok=True)
    for name, array in arrays.items():
        with open(os.path.join(folder, name + ".pb"), "wb") as f:
            f.write(onnx.numpy_helper.from_array(array, name).SerializeToString())


def strip_yield(path, out_path):
    """The YieldOp's outputs become graph inputs; returns their names and the values fed (ones)."""
    model = onnx.load(path)
    graph = model.graph
    yields = [n for n in graph.node if n.op_type == "YieldOp"]
    if len(yields) != 1:
        raise SystemExit(f"{path}: expected one YieldOp, found {len(yields)}")
    y = yields[0]
    info = {vi.name: vi for vi in list(graph.value_info) + list(graph.output) + list(graph.input)}
    feeds = {}
    for i, out in enumerate(y.output):
        if not out:
            continue
        src = info.get(y.input[i])
        elem = src.type.tensor_type.elem_type if src is not None else onnx.TensorProto.FLOAT
        dims = [d.dim_value for d in src.type.tensor_type.shape.dim] if src is not None else []
        if any(d <= 0 for d in dims):
            raise SystemExit(f"{path}: YieldOp input {y.input[i]} has no static shape")
        graph.input.append(onnx.helper.make_tensor_value_info(out, elem, dims))
        feeds[out] = np.ones(dims, dtype=onnx.helper.tensor_dtype_to_np_dtype(elem))
    graph.node.remove(y)
    onnx.save(model, out_path)
    return feeds


# Each runtime leaves worker threads that spin for a while after a run (ORT's pool, PyTorch's
# OpenMP team); measured right after, the next runtime shares the cores with them. Every
# measurement starts after this pause instead.
SETTLE_S = 0.5


def median_ms(fn, iters, warmup):
    time.sleep(SETTLE_S)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append(1000.0 * (time.perf_counter() - start))
    return statistics.median(times)


def memopt_ms(memopt, model, inputs, threads, iters, warmup):
    time.sleep(SETTLE_S)
    out = subprocess.run([memopt, "bench", model, "--inputs", inputs, "--iters", str(iters), "--warmup",
                          str(warmup), "--threads", str(threads), "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"memopt bench {model} failed ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout)["models"][0]["time_ms"]["median"]


def ort_runner(model, feeds, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001  (e.g. memopt's own LSTMGrad, which ORT has no kernel for)
        print(f"  ORT cannot run {model}: {str(e).splitlines()[0][:160]}", file=sys.stderr)
        return None
    names = {i.name for i in session.get_inputs()}
    run_feeds = {k: v for k, v in feeds.items() if k in names}
    return lambda: session.run(None, run_feeds)


def torch_runner(module, inputs, grad):
    args = tuple(inputs.values())
    if not grad:
        def forward():
            with torch.no_grad():
                module(*args)
        return forward

    def step():
        module.zero_grad(set_to_none=False)
        module(*args).backward()
    return step


def fmt(value):
    """Two decimals, or '-' for a figure that was not measured (ORT on a graph it cannot run)."""
    return "-" if value is None else f"{value:.2f}"


def measure(args, threads, work, all_cases, name, label):
    """Exports case `name`, builds its training graph and times the forward and the step."""
    rows = []
    cls, inputs, training = all_cases[name]
    torch.manual_seed(7)
    module = cls()
    fx.randomize(module, 7)
    module.train(training)
    folder = os.path.join(work, label.replace(" ", "_"))
    os.makedirs(folder, exist_ok=True)
    forward = os.path.join(folder, "forward.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(inputs.values()), forward, dynamo=False, opset_version=17,
                          input_names=list(inputs), output_names=["loss"], do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING if training
                          else torch.onnx.TrainingMode.EVAL)
    arrays = {k: v.numpy() for k, v in inputs.items()}
    save_inputs(os.path.join(folder, "forward_inputs"), arrays)
    training_graph = os.path.join(folder, "training.onnx")
    made = subprocess.run([args.memopt, "grad", forward, "-o", training_graph], capture_output=True, text=True)
    if made.returncode != 0:
        raise SystemExit(f"memopt grad {forward} failed: {made.stderr.strip()}")
    grad_graph = os.path.join(folder, "grad.onnx")
    grad_arrays = dict(arrays, **strip_yield(training_graph, grad_graph))
    save_inputs(os.path.join(folder, "grad_inputs"), grad_arrays)
    for kind, model, feeds, inputs_dir in (("forward", forward, arrays, "forward_inputs"),
                                           ("grad", grad_graph, grad_arrays, "grad_inputs")):
        row = {"case": f"{label} {kind}", "ms": {}}
        # Every round measures every thread count, so a stretch of time in which the host
        # takes a core from this machine lands on the 1-thread and the 2-thread figures alike
        # (and on all three runtimes), not on one thread count's rounds.
        ort_runs = {t: ort_runner(model, feeds, t) for t in threads}  # None where ORT cannot run it
        torch_run = torch_runner(module, inputs, kind == "grad")
        # Short steps get more iterations (the same count for every runtime and thread count),
        # so that one stretch of host contention moves a round's median less.
        iters = args.iters
        if args.min_round_ms > 0:
            step = median_ms(ort_runs[threads[0]] or torch_run, 3, 1)
            iters = max(args.iters, int(args.min_round_ms / max(step, 1e-3)))
        samples = {t: {"memopt": [], "ort": [], "torch": []} for t in threads}
        for _ in range(args.rounds):
            for t in threads:
                torch.set_num_threads(t)
                samples[t]["memopt"].append(memopt_ms(args.memopt, model, os.path.join(folder, inputs_dir), t,
                                                      iters, args.warmup))
                if ort_runs[t] is not None:
                    samples[t]["ort"].append(median_ms(ort_runs[t], iters, args.warmup))
                samples[t]["torch"].append(median_ms(torch_run, iters, args.warmup))
        row["iters"] = iters
        for t in threads:
            row["ms"][t] = {k: statistics.median(v) if v else None for k, v in samples[t].items()}
            print(f"  {row['case']}, {t} thread(s): " +
                  ", ".join(f"{k} {fmt(v)} ms" for k, v in row["ms"][t].items()), file=sys.stderr)
        rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--memopt", default=os.path.join(here, "..", "build", "tools", "memopt"))
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--cases", default="gpt2,bert,cnn,mlp,lstm,gru")
    parser.add_argument("--size", choices=["bench", "small"], default="bench")
    parser.add_argument("--iters", type=int, default=10, help="timed iterations per round, at least")
    parser.add_argument("--min-round-ms", type=float, default=200.0,
                        help="more iterations for short steps, so that a round times about this long "
                             "(from ORT's one-thread step); 0 keeps --iters")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", default=None, help="folder for the models (default: a temporary one)")
    parser.add_argument("--json", default=None, help="also write the rows here")
    parser.add_argument("--sweep", action="store_true",
                        help="the GPT-style case over a sweep of shapes (hidden 64-1024, heads 2-16, seq 32-1024, "
                             "batch 1-512) instead of --cases")
    parser.add_argument("--points", default=None, help="with --sweep: comma-separated indices of SWEEP to run")
    args = parser.parse_args()
    threads = [int(x) for x in args.threads.split(",")]
    extra = set_sizes(args.size)
    work = args.work or tempfile.mkdtemp(prefix="memopt_bench_exec_")
    os.makedirs(work, exist_ok=True)
    if args.sweep:
        rows = []
        chosen = [SWEEP[int(i)] for i in args.points.split(",")] if args.points else SWEEP
        for point in chosen:
            label = set_sweep_point(point)
            rows += measure(args, threads, work, cases(extra), "gpt2", label)
        describe = (f"sweep: GPT-style pre-LN decoder ({len(SWEEP)} shapes, vocab {SWEEP_VOCAB}; h hidden, "
                    f"a heads, L layers, b batch, s seq)")
    else:
        rows = []
        all_cases = cases(extra)
        for name in args.cases.split(","):
            if name not in all_cases:
                raise SystemExit(f"unknown case '{name}' (known: {', '.join(all_cases)})")
            rows += measure(args, threads, work, all_cases, name, name)
        describe = (f"sizes: {args.size} (GPT/BERT batch {fx.BATCH} x seq {fx.SEQ}, hidden {fx.HIDDEN}, "
                    f"{fx.LAYERS} layers, vocab {fx.VOCAB}; ConvNet batch {extra['cnn_batch']} x 3 x "
                    f"{extra['cnn_hw']}^2, {fx.CNN_CHANNELS} channels; MLP batch {extra['mlp_batch']}, "
                    f"{fx.MLP_IN}-{fx.MLP_HIDDEN}-{fx.MLP_OUT})")
    print(f"{describe}; medians of {args.rounds} rounds x {args.iters} iterations (more for short steps: "
          f"rounds of at least {args.min_round_ms:g} ms); torch {torch.__version__}")
    header = "| case |"
    sep = "|---|"
    for t in threads:
        header += f" memopt ms ({t}t) | ORT ms ({t}t) | PyTorch ms ({t}t) | memopt/ORT ({t}t) | memopt/PyTorch ({t}t) |"
        sep += "---|---|---|---|---|"
    if len(threads) > 1:
        header += f" memopt speedup {threads[0]}t->{threads[-1]}t |"
        sep += "---|"
    print(header)
    print(sep)
    for row in rows:
        line = f"| {row['case']} |"
        for t in threads:
            m = row["ms"][t]
            ort_ratio = m["memopt"] / m["ort"] if m["ort"] else None
            line += (f" {fmt(m['memopt'])} | {fmt(m['ort'])} | {fmt(m['torch'])} | {fmt(ort_ratio)} |"
                     f" {fmt(m['memopt'] / m['torch'])} |")
        if len(threads) > 1:
            line += f" {row['ms'][threads[0]]['memopt'] / row['ms'][threads[-1]]['memopt']:.2f} |"
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": args.size, "threads": threads, "rows": rows}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
