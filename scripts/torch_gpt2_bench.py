#!/usr/bin/env python3
"""The PyTorch anchor of scripts/gpu_bench.sh: a GPT-2 training step (transformers' GPT2LMHeadModel,
dropout 0, random non-zero token ids) timed as PyTorch eager: plain (transformers' default attention,
fused SDPA where torch has it), with attention materialised (attn_implementation="eager": the
[batch, heads, seq, seq] scores and probabilities in memory, as in memopt's graphs), and with per-layer
gradient checkpointing (torch.utils.checkpoint through gradient_checkpointing_enable()).

The model has the shape of scripts/gen_transformer_training.py's graph for the same arguments, so the
rows sit beside memopt's on the same step. One line per variant, parsed by gpu_bench.sh:

    torch plain: peak allocated 9.64 GiB, peak reserved 10.1 GiB, median 42.3 ms, p95 42.9 ms, loss 10.9

(variants: plain, eager, checkpoint).

Peaks are torch.cuda.max_memory_allocated / max_memory_reserved over the timed steps (in GiB, '-' on
the CPU, where PyTorch keeps no such count); times are CUDA events on a GPU, the monotonic clock on
the CPU. Exit status: 0, or 1 when torch or transformers is missing or a step fails.
"""

import argparse
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--max-positions", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--dtype", choices=["float16", "float"], default="float16")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    try:
        import torch
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError as e:
        print(f"torch_gpt2_bench.py: {e} (needs torch and transformers)", file=sys.stderr)
        return 1
    if a.device == "cuda" and not torch.cuda.is_available():
        print("torch_gpt2_bench.py: torch sees no GPU", file=sys.stderr)
        return 1
    if a.iters < 1 or a.warmup < 0:
        print("torch_gpt2_bench.py: --iters must be >= 1 and --warmup >= 0", file=sys.stderr)
        return 1
    gpu = a.device == "cuda"
    dtype = torch.float16 if a.dtype == "float16" else torch.float32
    for name in ("plain", "eager", "checkpoint"):
        torch.manual_seed(0)  # the same weights and ids in every variant: their losses agree
        cfg = GPT2Config(n_layer=a.layers, n_embd=a.hidden, n_head=a.heads, vocab_size=a.vocab,
                         n_positions=a.max_positions, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                         **({"attn_implementation": "eager"} if name == "eager" else {}))
        ckpt = name == "checkpoint"
        model = GPT2LMHeadModel(cfg).to(device=a.device, dtype=dtype)
        if name == "eager" and getattr(model.config, "_attn_implementation", "eager") != "eager":
            print(f"torch_gpt2_bench.py: transformers kept attention '{model.config._attn_implementation}'",
                  file=sys.stderr)
            return 1
        model.config.use_cache = False
        if ckpt:
            model.gradient_checkpointing_enable()
        model.train()
        ids = torch.randint(1, a.vocab, (a.batch, a.seq), device=a.device)
        times = []
        if gpu:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        for i in range(a.warmup + a.iters):
            if gpu:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
            else:
                t0 = time.perf_counter()
            out = model(input_ids=ids, labels=ids)
            out.loss.backward()
            if gpu:
                e.record()
                torch.cuda.synchronize()
                ms = s.elapsed_time(e)
            else:
                ms = 1e3 * (time.perf_counter() - t0)
            if i >= a.warmup:
                times.append(ms)
            loss = out.loss.item()
            del out
            model.zero_grad(set_to_none=True)
        times.sort()
        median = times[len(times) // 2]
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        gib = 2.0 ** 30
        alloc = f"{torch.cuda.max_memory_allocated() / gib:.2f} GiB" if gpu else "- -"
        resv = f"{torch.cuda.max_memory_reserved() / gib:.2f} GiB" if gpu else "- -"
        print(f"torch {name}: peak allocated {alloc}, peak reserved {resv}, median {median:.1f} ms, "
              f"p95 {p95:.1f} ms, loss {loss:.3f}", flush=True)
        del model
        if gpu:
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
