#!/usr/bin/env python3
"""Runs one CPU training step of small, randomly initialised transformers models under ORTModule
and keeps the training graph ORT's memory optimizer analyses, with the configs ORTModule applies
at ORTMODULE_MEMORY_OPT_LEVEL=1 and 2, as test data for tests/ort_oracle (which then needs only
onnxruntime-training, not torch).

For each model, <out>/<name>/ holds:
    optimized_training.onnx  ORTModule's `<prefix>_optimized_training.onnx` (DebugOptions
                             save_onnx): forward + YieldOp + backward; weights are graph inputs
    ortmodule_level1.json, ortmodule_level2.json
                             the config ORTModule wrote for its session at that level
    manifest.json            input shapes, versions
<out>/failures.json lists the models ORTModule could not train, with its error.

Models: T5, GPT-NeoX, Qwen2 (grouped-query attention), DistilBERT, RoBERTa, ConvNeXt, Swin and
Whisper's encoder (audio classification), plus float16 variants of GPT-NeoX and Qwen2. Eager
attention (SDPA with attention dropout breaks ORTModule's export), dropout 0.

Usage: .venv-torch/bin/python scripts/export_ortmodule_graphs.py [--out tests/data/ortmodule_graphs]
Needs torch 2.4.x, transformers 4.44.x and onnxruntime-training 1.19.2 with ORTModule's CPU
extensions built (docs/ort.md, "Test data").
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

BATCH, SEQ, VOCAB, HIDDEN = 2, 16, 64, 32


def build(name):
    """(model, example inputs) for `name`; imported here so the parent process needs no torch."""
    import torch
    import transformers as tf

    g = torch.Generator().manual_seed(7)
    ids = torch.randint(1, VOCAB, (BATCH, SEQ), generator=g)
    text = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=64, attn_implementation="eager")
    base = name.removesuffix("_fp16")
    if base == "gpt_neox":
        model = tf.GPTNeoXForCausalLM(tf.GPTNeoXConfig(hidden_dropout=0.0, attention_dropout=0.0, **text))
        inputs = {"input_ids": ids, "labels": ids}
    elif base == "qwen2":
        model = tf.Qwen2ForCausalLM(tf.Qwen2Config(num_key_value_heads=2, attention_dropout=0.0, **text))
        inputs = {"input_ids": ids, "labels": ids}
    elif base == "distilbert":
        model = tf.DistilBertForMaskedLM(tf.DistilBertConfig(vocab_size=VOCAB, dim=HIDDEN, n_layers=2, n_heads=4,
                                                             hidden_dim=64, max_position_embeddings=64, dropout=0.0,
                                                             attention_dropout=0.0, attn_implementation="eager"))
        inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}
    elif base == "roberta":
        model = tf.RobertaForMaskedLM(tf.RobertaConfig(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                                       pad_token_id=0, **{**text, "max_position_embeddings": 80}))
        inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}
    elif base == "t5":
        model = tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=8, d_ff=64,
                                                          num_layers=2, num_heads=4, dropout_rate=0.0,
                                                          decoder_start_token_id=0))
        inputs = {"input_ids": ids, "labels": ids[:, : SEQ // 2].contiguous()}
    elif base == "convnext":
        model = tf.ConvNextForImageClassification(tf.ConvNextConfig(num_stages=2, hidden_sizes=[16, 32],
                                                                    depths=[1, 1], num_labels=5))
        inputs = {"pixel_values": torch.randn(BATCH, 3, 32, 32, generator=g),
                  "labels": torch.randint(0, 5, (BATCH,), generator=g)}
    elif base == "swin":
        model = tf.SwinForImageClassification(tf.SwinConfig(image_size=32, patch_size=4, embed_dim=16,
                                                            depths=[1, 1], num_heads=[2, 2], window_size=4,
                                                            num_labels=5, hidden_dropout_prob=0.0,
                                                            attention_probs_dropout_prob=0.0, drop_path_rate=0.0))
        inputs = {"pixel_values": torch.randn(BATCH, 3, 32, 32, generator=g),
                  "labels": torch.randint(0, 5, (BATCH,), generator=g)}
    elif base == "whisper_encoder":
        config = tf.WhisperConfig(vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=2, encoder_attention_heads=4,
                                  encoder_ffn_dim=64, num_mel_bins=16, max_source_positions=32, dropout=0.0,
                                  attention_dropout=0.0, num_labels=5)
        config._attn_implementation = "eager"
        model = tf.WhisperForAudioClassification(config)
        inputs = {"input_features": torch.randn(BATCH, 16, 64, generator=g),
                  "labels": torch.randint(0, 5, (BATCH,), generator=g)}
    else:
        raise ValueError(name)
    if name.endswith("_fp16"):
        model = model.half()
    model.train()
    return model, inputs


def step(name, level, prefix, config_out):
    """Child process: one training step under ORTModule at `level`; saves the graphs (prefix) and
    the config ORTModule applies (config_out)."""
    import warnings

    import torch

    warnings.simplefilter("ignore")
    os.environ["ORTMODULE_MEMORY_OPT_LEVEL"] = str(level)
    from onnxruntime.training.ortmodule import DebugOptions, LogLevel, ORTModule, _runtime_inspector

    applied = []
    original_dump = _runtime_inspector.json.dump

    def recording_dump(obj, fp, *args, **kwargs):
        if isinstance(obj, list):
            applied.append(obj)
        return original_dump(obj, fp, *args, **kwargs)

    _runtime_inspector.json.dump = recording_dump
    model, inputs = build(name)
    names = list(inputs)

    class WithLoss(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *args):
            return self.m(**dict(zip(names, args))).loss

    wrapped = ORTModule(WithLoss(model), DebugOptions(save_onnx=True, onnx_prefix=prefix, log_level=LogLevel.ERROR))
    result = {"inputs": {n: list(v.shape) for n, v in inputs.items()}}
    try:
        loss = wrapped(*[inputs[n] for n in names])
        loss.backward()
        result["loss"] = float(loss)
    except Exception as e:  # noqa: BLE001
        # ORT's CPU kernels lack some float16 gradients (SliceGrad), and at level 2 ORT's rewrite of
        # an fp16 graph names two clones "_recompute" and refuses itself: the graphs and the config
        # are made before that, so they are kept, with the error.
        if not os.path.exists(prefix + "_optimized_training.onnx"):
            raise
        result["step_error"] = str(e).strip().splitlines()[0][:300]
    with open(config_out, "w") as f:
        json.dump(applied[-1] if applied else [], f, indent=1)
        f.write("\n")
    print(json.dumps(result))


MODELS = ["gpt_neox", "qwen2", "distilbert", "roberta", "t5", "convnext", "swin", "whisper_encoder",
          "gpt_neox_fp16", "qwen2_fp16"]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--step":
        step(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "ortmodule_graphs"))
    parser.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    os.makedirs(args.out, exist_ok=True)
    failures_path = os.path.join(args.out, "failures.json")
    failures = json.load(open(failures_path)) if only and os.path.exists(failures_path) else {}
    import onnxruntime
    import torch
    import transformers
    for name in MODELS:
        if only and name not in only:
            continue
        failures.pop(name, None)
        folder = os.path.join(args.out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        manifest = {"model": name, "torch_version": torch.__version__, "transformers_version": transformers.__version__,
                    "onnxruntime_version": onnxruntime.__version__}
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for level in (0, 1, 2):
                    prefix = os.path.join(tmp, f"level{level}")
                    config = os.path.join(folder, f"ortmodule_level{level}.json")
                    run = subprocess.run([sys.executable, __file__, "--step", name, str(level), prefix, config],
                                         capture_output=True, text=True, cwd=tmp)
                    if run.returncode != 0:
                        lines = [l for l in run.stderr.strip().splitlines() if l.strip()]
                        raise RuntimeError(lines[-1] if lines else f"exit {run.returncode}")
                    manifest[f"level{level}"] = json.loads(run.stdout.strip().splitlines()[-1])
                    if level == 0:
                        os.remove(config)  # level 0 applies the user's (empty) config
                        shutil.copy(prefix + "_optimized_training.onnx", os.path.join(folder, "optimized_training.onnx"))
        except Exception as e:  # noqa: BLE001 - ORTModule's own failure: listed, not fatal
            shutil.rmtree(folder, ignore_errors=True)
            failures[name] = str(e)
            print(f"{name}: ORTModule failed: {e}")
            continue
        manifest["inputs"] = manifest["level0"]["inputs"]
        with open(os.path.join(folder, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
        size = os.path.getsize(os.path.join(folder, "optimized_training.onnx"))
        outcome = manifest["level0"].get("loss", manifest["level0"].get("step_error"))
        print(f"{name}: {size} bytes, step: {outcome}")
    with open(failures_path, "w") as f:
        json.dump(dict(sorted(failures.items())), f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
