#!/usr/bin/env python3
# PyTorch anchor for docs/gpu_results.md: GPT-2 small (12 layers, 768, vocab 50257) training step,
# fp16 weights (as the memopt graph), batch 8, seq 1024: peak allocated memory and median step time,
# without and with per-layer gradient checkpointing. Random (non-zero) token ids.
import time, torch
from transformers import GPT2Config, GPT2LMHeadModel
torch.manual_seed(0)
cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, vocab_size=50257, n_positions=1024,
                 resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
for ckpt in (False, True):
    model = GPT2LMHeadModel(cfg).cuda().half()
    model.config.use_cache = False
    if ckpt:
        model.gradient_checkpointing_enable()
    model.train()
    ids = torch.randint(0, 50257, (8, 1024), device="cuda")
    times = []
    for i in range(13):
        torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        e.record(); torch.cuda.synchronize()
        if i >= 3: times.append(s.elapsed_time(e))
        model.zero_grad(set_to_none=True)
    times.sort()
    print(f"torch {'checkpoint(layer)' if ckpt else 'plain'}: peak allocated {torch.cuda.max_memory_allocated()/2**30:.2f} GiB, "
          f"median {times[len(times)//2]:.1f} ms, loss {out.loss.item():.3f}")
    del model, out; torch.cuda.empty_cache()
