#!/usr/bin/env python3
"""Exports small randomly initialised models with the current PyTorch's `torch.onnx.export` (the
dynamo exporter by default), with their autograd gradients keyed by PyTorch parameter name, as
fixtures for `memopt grad` / `run` / `plan` / `apply --verify` (issue: every model users export).

Models: GPT-2, LLaMA, BERT, Mistral, Gemma, Falcon, Mixtral (2 experts), DeBERTa-v2, ViT (Hugging
Face transformers), ResNet with BatchNorm, MobileNetV2, a U-Net with ConvTranspose and upsampling,
an LSTM and a GRU language model (torch.nn), each wrapped to return its loss, in training mode.
Every parameter gets distinct random values, as a trained model has (fresh norm scales of 1 and
biases of 0 are what the exporter's optimizer merges; a trained model has none).

Variants:
  default   torch.onnx.export(model, args, dynamic_shapes=...): what a user gets today;
  noopt     the same with optimize=False (no constant folding, no initializer merging).

For each case that exports, <out>/<model>_<variant>/ holds model.onnx, inputs/input_<i>.pb (by
position), expected/<pytorch name>_grad.pb (the autograd gradient of each parameter) and
manifest.json (loss, dims at the export's sizes, gradients, buffers): the layout of
scripts/export_torch_exports.py, read by lib/grad/grad_fixture_test.cc. <out>/failures.json lists the
cases the exporter itself cannot export, with its error.

Usage: venv/bin/python scripts/export_torch_current.py [--out DIR] [--only gpt2,unet]
Needs torch >= 2.9, onnxscript, onnx and transformers 5 (scripts/setup_torch_current_venv.sh).
"""
import argparse
import json
import math
import os
import shutil
import traceback
import warnings

import onnx
import onnx.numpy_helper
import torch
import transformers as tf

# Shared with the PyTorch 2.4 fixtures:
from export_torch_exports import (RnnLM, UNet, WithLoss, first_line, randomize, root_cause, save_tensor,
                                  write_failures)

BATCH, SEQ, VOCAB, HIDDEN, IMAGE = 2, 8, 32, 16, 32


def text_models():
    common = dict(vocab_size=VOCAB, tie_word_embeddings=False)
    llama_like = dict(hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      intermediate_size=32, max_position_embeddings=32, **common)
    return {
        "gpt2": lambda: tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=HIDDEN, n_layer=2, n_head=2, n_positions=32,
                                                         resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                                                         bos_token_id=0, eos_token_id=0, **common)),
        "llama": lambda: tf.LlamaForCausalLM(tf.LlamaConfig(**llama_like)),
        "mistral": lambda: tf.MistralForCausalLM(tf.MistralConfig(**llama_like)),
        "gemma": lambda: tf.GemmaForCausalLM(tf.GemmaConfig(head_dim=4, **llama_like)),
        # "batched_mm": the eager experts loop over torch.nonzero's result, which torch.export cannot trace.
        "mixtral": lambda: tf.MixtralForCausalLM(tf.MixtralConfig(num_local_experts=2, num_experts_per_tok=1, experts_implementation="batched_mm",
                                                                  **llama_like)),
        "falcon": lambda: tf.FalconForCausalLM(tf.FalconConfig(hidden_size=HIDDEN, num_hidden_layers=2,
                                                               num_attention_heads=2, hidden_dropout=0.0,
                                                               attention_dropout=0.0, bos_token_id=0,
                                                               eos_token_id=0, **common)),
        "bert": lambda: tf.BertForMaskedLM(tf.BertConfig(hidden_size=HIDDEN, num_hidden_layers=2,
                                                         num_attention_heads=2, intermediate_size=32,
                                                         max_position_embeddings=32, hidden_dropout_prob=0.0,
                                                         attention_probs_dropout_prob=0.0, **common)),
        "deberta": lambda: tf.DebertaV2ForMaskedLM(tf.DebertaV2Config(hidden_size=HIDDEN, num_hidden_layers=2,
                                                                      num_attention_heads=2, intermediate_size=32,
                                                                      max_position_embeddings=32,
                                                                      hidden_dropout_prob=0.0,
                                                                      attention_probs_dropout_prob=0.0,
                                                                      **common)),
    }


def vision_models():
    return {
        "vit": lambda: tf.ViTForImageClassification(tf.ViTConfig(image_size=IMAGE, patch_size=8, hidden_size=HIDDEN,
                                                                 num_hidden_layers=2, num_attention_heads=2,
                                                                 intermediate_size=32, num_labels=5,
                                                                 hidden_dropout_prob=0.0,
                                                                 attention_probs_dropout_prob=0.0)),
        "resnet": lambda: tf.ResNetForImageClassification(tf.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32],
                                                                          depths=[1, 1], layer_type="basic",
                                                                          num_labels=5)),
        "mobilenetv2": lambda: tf.MobileNetV2ForImageClassification(tf.MobileNetV2Config(
            image_size=2 * IMAGE, depth_multiplier=0.25, num_labels=5, classifier_dropout_prob=0.0)),
    }


def inputs_for(name, g):
    """Inputs by keyword and each input's dynamic axes."""
    if name in ("unet",):
        return ({"x": torch.randn(BATCH, 3, IMAGE, IMAGE, generator=g),
                 "target": torch.randn(BATCH, 3, IMAGE, IMAGE, generator=g)}, {"x": {0: "batch"}, "target": {0: "batch"}})
    if name in ("vit", "resnet", "mobilenetv2"):
        side = 2 * IMAGE if name == "mobilenetv2" else IMAGE  # 32x down: 2x2 at the last BatchNorm, not 1x1
        return ({"pixel_values": torch.randn(BATCH, 3, side, side, generator=g),
                 "labels": torch.randint(0, 5, (BATCH,), generator=g)}, {"pixel_values": {0: "batch"}, "labels": {0: "batch"}})
    ids = torch.randint(1, VOCAB, (BATCH, SEQ), generator=g)
    labels = torch.randint(1, VOCAB, (BATCH, SEQ), generator=g)
    axes = {"input_ids": {0: "batch", 1: "seq_len"}, "labels": {0: "batch", 1: "seq_len"}}
    if name in ("bert", "deberta"):
        mask = torch.ones(BATCH, SEQ, dtype=torch.long)
        mask[1, -2:] = 0
        labels[:, ::3] = -100
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}, {**axes, "attention_mask": axes["labels"]}
    return {"input_ids": ids, "labels": labels}, axes


def make_model(name):
    if name == "unet":
        return UNet(), False
    if name in ("lstm", "gru"):
        return RnnLM(torch.nn.LSTM if name == "lstm" else torch.nn.GRU), False
    return {**text_models(), **vision_models()}[name](), True


MODELS = list(text_models()) + list(vision_models()) + ["unet", "lstm", "gru"]


def export(module, args, names, axes, path, optimize):
    dims = {}
    shapes = tuple({a: dims.setdefault(d, torch.export.Dim(d)) for a, d in axes[n].items()} for n in names)
    if isinstance(module, WithLoss):  # forward(*args): one entry for the varargs
        shapes = (shapes,)
    torch.onnx.export(module, args, path, input_names=names, output_names=["loss"], dynamic_shapes=shapes,
                      optimize=optimize, verbose=False, external_data=False)


def export_case(out, name, variant, seed):
    folder = os.path.join(out, f"{name}_{variant}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "inputs"))
    os.makedirs(os.path.join(folder, "expected"))
    torch.manual_seed(seed)
    model, hf = make_model(name)
    randomize(model, seed)
    model.train()
    g = torch.Generator().manual_seed(seed)
    inputs, axes = inputs_for(name, g)
    names = list(inputs)
    args = tuple(inputs[n] for n in names)
    wrapped = WithLoss(model, names) if hf else model
    buffers_before = {k: v.clone() for k, v in wrapped.named_buffers()}
    path = os.path.join(folder, "model.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        export(wrapped, args, names, axes, path, optimize=(variant == "default"))
    for k, v in wrapped.named_buffers():  # exporting ran the model: put BatchNorm's statistics back
        v.copy_(buffers_before[k])
    proto = onnx.load(path)
    inits = {t.name for t in proto.graph.initializer}
    graph_inputs = [i.name for i in proto.graph.input if i.name not in inits]
    if len(graph_inputs) != len(args):
        raise RuntimeError(f"the export has {len(graph_inputs)} inputs for {len(args)} arguments: {graph_inputs}")

    wrapped.zero_grad()
    loss = wrapped(*args)
    loss.backward()
    grads = []
    for pname, p in wrapped.named_parameters():
        if p.grad is None:
            continue
        save_tensor(os.path.join(folder, "expected", pname + "_grad.pb"), p.grad.numpy(), pname + "_grad")
        grads.append(pname)
    for i, value in enumerate(args):
        save_tensor(os.path.join(folder, "inputs", f"input_{i}.pb"), value.numpy(), graph_inputs[i])
    dims = {}
    for n, per_axis in axes.items():
        for axis, dim in per_axis.items():
            dims[dim] = inputs[n].shape[axis]
    manifest = {
        "model": "model.onnx",
        "exporter": "dynamo" + ("" if variant == "default" else " optimize=False"),
        "loss": proto.graph.output[0].name,
        "loss_value": float(loss.detach()),
        "inputs": dict(zip(graph_inputs, names)),
        "dims": ",".join(f"{k}={v}" for k, v in sorted(dims.items())),
        "gradients": grads,
        "buffers": sorted(k for k, _ in wrapped.named_buffers()),
        "initializers_not_parameters": sorted(inits - set(grads)),
        "torch_version": torch.__version__,
        "transformers_version": tf.__version__,
    }
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(r, fn)) for r, _, fs in os.walk(folder) for fn in fs)
    print(f"{name}_{variant}: {len(proto.graph.node)} nodes, {len(grads)} parameters, "
          f"{len(inits)} initializers, {size} bytes", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "torch_current"))
    parser.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    failures = {}
    for i, name in enumerate(MODELS):
        if only and name not in only:
            continue
        for variant in ("default", "noopt"):
            try:
                export_case(args.out, name, variant, seed=300 + i)
            except Exception as e:  # the exporter's own failure: listed, not fatal
                shutil.rmtree(os.path.join(args.out, f"{name}_{variant}"), ignore_errors=True)
                failures[f"{name}_{variant}"] = first_line(root_cause(e))
                print(f"{name}_{variant}: exporter failed: {failures[name + '_' + variant]}", flush=True)
                if os.environ.get("DEBUG"):
                    traceback.print_exc()
    write_failures(args.out, only, failures)


if __name__ == "__main__":
    main()
