#!/usr/bin/env python3
"""Exports small randomly initialised Hugging Face transformers models with both PyTorch exporters,
with their autograd gradients, as fixtures for `memopt grad` / `run` / `plan` / `apply --verify`.

Models: GPT-2, BERT (masked LM), LLaMA with grouped-query attention, T5, ViT, ResNet, ConvNeXt
with both exporters; DeBERTa-v2 (masked LM), BLOOM, MobileNetV2, EfficientNet, Mixtral (2 experts),
a U-Net (ConvTranspose, bilinear and nearest up-sampling) and LSTM and GRU language models with
TorchScript only (the models users export with it whose graphs need more of memopt: Tile and Pad
from shape arithmetic, dims from Range, recurrent ops, routers). Hugging Face models are wrapped
to return their loss. Configurations are tiny (2 layers, hidden 16), dropout is 0,
word embeddings are untied, and every parameter gets distinct random values (torch initialises
norm scales to 1 and biases to 0, which an exporter may merge into one initializer).

Exporters:
  ts      torch.onnx.export(dynamo=False), opset 17, no constant folding, training mode, a symbolic
          batch dim (and sequence dims for text models), as memopt's users export today;
  dynamo  torch.onnx.dynamo_export (the default exporter of current PyTorch): the model is one
          call of a model-local function per module. The onnxscript optimizer that runs after it
          folds `weight.T` of every Linear into a constant, which takes the weights out of
          training; it is switched off here, as a user exporting for training must do.

For each case that exports, <out>/<model>_<exporter>/ holds the layout of
scripts/export_torch_fixtures.py: model.onnx, inputs/input_<i>.pb (by position), expected/
<initializer>_grad.pb (autograd), manifest.json (loss, gradients, parameters the export does not
carry as initializers). <out>/failures.json lists the cases the exporter itself cannot export,
with its error. Read by lib/grad/grad_fixture_test.cc and tests/torch_exports/.

Usage: .venv-torch/bin/python scripts/export_torch_exports.py [--out tests/data/torch_exports]
Needs torch 2.4.x, transformers 4.44.x, onnx and onnxscript 0.1.0 (scripts/setup_torch_venv.sh).
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

BATCH, SEQ, TGT, VOCAB, HIDDEN, IMAGE = 2, 8, 6, 32, 16, 32


def text_configs():
    common = dict(vocab_size=VOCAB, tie_word_embeddings=False)
    return {
        "gpt2": (tf.GPT2LMHeadModel, tf.GPT2Config(n_embd=HIDDEN, n_layer=2, n_head=2, n_positions=32,
                                                    resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **common)),
        "bert": (tf.BertForMaskedLM, tf.BertConfig(hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=2,
                                                    intermediate_size=32, max_position_embeddings=32,
                                                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                                                    **common)),
        "llama": (tf.LlamaForCausalLM, tf.LlamaConfig(hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=4,
                                                       num_key_value_heads=2, intermediate_size=32,
                                                       max_position_embeddings=32, attention_dropout=0.0, **common)),
        "t5": (tf.T5ForConditionalGeneration, tf.T5Config(d_model=HIDDEN, d_kv=4, d_ff=32, num_layers=2,
                                                          num_decoder_layers=2, num_heads=4, dropout_rate=0.0,
                                                          relative_attention_num_buckets=8, decoder_start_token_id=0,
                                                          **common)),
    }


def ts_only_configs():
    """Models exported with TorchScript only: (class or factory, config)."""
    common = dict(vocab_size=VOCAB, tie_word_embeddings=False)
    return {
        "deberta": (tf.DebertaV2ForMaskedLM, tf.DebertaV2Config(hidden_size=HIDDEN, num_hidden_layers=2,
                                                                num_attention_heads=2, intermediate_size=32,
                                                                max_position_embeddings=32, hidden_dropout_prob=0.0,
                                                                attention_probs_dropout_prob=0.0, **common)),
        "bloom": (tf.BloomForCausalLM, tf.BloomConfig(hidden_size=HIDDEN, n_layer=2, n_head=2, hidden_dropout=0.0,
                                                      attention_dropout=0.0, **common)),
        "mixtral": (tf.MixtralForCausalLM, tf.MixtralConfig(hidden_size=HIDDEN, num_hidden_layers=2,
                                                            num_attention_heads=4, num_key_value_heads=2,
                                                            intermediate_size=32, max_position_embeddings=32,
                                                            num_local_experts=2, num_experts_per_tok=1, **common)),
        "mobilenetv2": (tf.MobileNetV2ForImageClassification, tf.MobileNetV2Config(
            image_size=2 * IMAGE, depth_multiplier=0.25, num_labels=5, classifier_dropout_prob=0.0)),
        "efficientnet": (tf.EfficientNetForImageClassification, tf.EfficientNetConfig(
            image_size=2 * IMAGE, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320, num_labels=5,
            dropout_rate=0.0,
            drop_connect_rate=0.0)),
        "unet": (lambda _: UNet(), None),
        "lstm": (lambda _: RnnLM(torch.nn.LSTM), None),
        "gru": (lambda _: RnnLM(torch.nn.GRU), None),
    }


class UNet(torch.nn.Module):
    """Two levels: Conv-BatchNorm-ReLU blocks, max-pool down, ConvTranspose and bilinear up, skips."""

    def __init__(self):
        super().__init__()

        def block(i, o):
            return torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, padding=1), torch.nn.BatchNorm2d(o), torch.nn.ReLU())
        self.enc1, self.enc2, self.mid = block(3, 8), block(8, 16), block(16, 16)
        self.up2 = torch.nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.dec2 = block(32, 8)
        self.up1 = torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.dec1 = block(16, 8)
        self.up0 = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.head = torch.nn.Conv2d(8, 3, 1)

    def forward(self, x, target):
        e1 = self.enc1(x)
        e2 = self.enc2(torch.nn.functional.max_pool2d(e1, 2))
        m = self.mid(torch.nn.functional.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        y = self.head(torch.nn.functional.max_pool2d(self.up0(d1), 2))
        return torch.nn.functional.mse_loss(y, target)


class RnnLM(torch.nn.Module):
    """Embedding, a 2-layer LSTM or GRU (batch first), a vocabulary head, cross-entropy."""

    def __init__(self, cell):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        self.rnn = cell(HIDDEN, HIDDEN, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(HIDDEN, VOCAB)

    def forward(self, ids, labels):
        h, _ = self.rnn(self.embed(ids))
        return torch.nn.functional.cross_entropy(self.head(h).flatten(0, 1), labels.flatten())


def vision_configs():
    return {
        "vit": (tf.ViTForImageClassification, tf.ViTConfig(image_size=IMAGE, patch_size=8, hidden_size=HIDDEN,
                                                           num_hidden_layers=2, num_attention_heads=2,
                                                           intermediate_size=32, num_labels=5,
                                                           hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)),
        "resnet": (tf.ResNetForImageClassification, tf.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32],
                                                                    depths=[1, 1], layer_type="basic", num_labels=5)),
        "convnext": (tf.ConvNextForImageClassification, tf.ConvNextConfig(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1],
                                                                          num_labels=5, drop_path_rate=0.0)),
    }


class WithLoss(torch.nn.Module):
    """Calls the Hugging Face model with keyword inputs and returns its loss."""

    def __init__(self, model, names):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args))).loss


def inputs_for(name, g):
    ids = torch.randint(1, VOCAB, (BATCH, SEQ), generator=g)
    labels = torch.randint(1, VOCAB, (BATCH, SEQ), generator=g)
    if name == "unet":
        return ({"x": torch.randn(BATCH, 3, IMAGE, IMAGE, generator=g),
                 "target": torch.randn(BATCH, 3, IMAGE, IMAGE, generator=g)}, {"x": {0: "batch"}, "target": {0: "batch"}})
    if name in ("lstm", "gru"):
        return {"ids": ids, "labels": labels}, {"ids": {0: "batch", 1: "seq_len"}, "labels": {0: "batch", 1: "seq_len"}}
    if name in ("bert", "deberta"):
        mask = torch.ones(BATCH, SEQ, dtype=torch.long)
        mask[1, -2:] = 0
        mlm = labels.clone()
        mlm[:, ::3] = -100
        return {"input_ids": ids, "attention_mask": mask, "labels": mlm}, {"input_ids": {0: "batch", 1: "seq_len"},
                                                                          "attention_mask": {0: "batch", 1: "seq_len"},
                                                                          "labels": {0: "batch", 1: "seq_len"}}
    if name == "t5":
        return ({"input_ids": ids, "labels": torch.randint(1, VOCAB, (BATCH, TGT), generator=g)},
                {"input_ids": {0: "batch", 1: "src_len"}, "labels": {0: "batch", 1: "tgt_len"}})
    if name in ("gpt2", "llama", "bloom", "mixtral"):
        return {"input_ids": ids, "labels": labels}, {"input_ids": {0: "batch", 1: "seq_len"},
                                                     "labels": {0: "batch", 1: "seq_len"}}
    side = 2 * IMAGE if name in ("mobilenetv2", "efficientnet") else IMAGE  # 32x down: 2x2 at the end
    pixels = torch.randn(BATCH, 3, side, side, generator=g)
    return {"pixel_values": pixels, "labels": torch.randint(0, 5, (BATCH,), generator=g)}, {
        "pixel_values": {0: "batch"}, "labels": {0: "batch"}}


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            scale = 0.5 if p.dim() < 2 else 1.0 / math.sqrt(max(1, p[0].numel()))
            p.copy_(torch.randn(p.shape, generator=g) * scale)
            if p.dim() == 1:
                p.add_(1.0)


def save_tensor(path, array, name):
    with open(path, "wb") as f:
        f.write(onnx.numpy_helper.from_array(array, name).SerializeToString())


def export_ts(module, args, names, axes, path, training):
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(module, args, path, dynamo=False, opset_version=17, input_names=names, output_names=["loss"],
                      do_constant_folding=False, dynamic_axes=axes, training=mode)


def export_dynamo(module, args, path):
    import onnxscript.optimizer
    saved = onnxscript.optimizer.optimize
    onnxscript.optimizer.optimize = lambda model, *a, **k: model  # keeps Linear weights as initializers
    try:
        program = torch.onnx.dynamo_export(module, *args)
        program.save(path)
    finally:
        onnxscript.optimizer.optimize = saved


def dims_text(axes, inputs):
    """--dims for the symbolic dims of a TorchScript export, at the fixture's input sizes."""
    dims = {}
    for name, per_axis in axes.items():
        for axis, dim in per_axis.items():
            dims[dim] = inputs[name].shape[axis]
    return ",".join(f"{k}={v}" for k, v in sorted(dims.items()))


def initializer_names(model_proto):
    return {t.name for t in model_proto.graph.initializer}


def onnx_name(pname, initializers):
    """The initializer holding parameter `pname` of the wrapped model (exporters prefix it)."""
    for candidate in (pname, "model." + pname):
        if candidate in initializers:
            return candidate
    return None


def export_case(out, model_name, exporter, cls, config, seed):
    folder = os.path.join(out, f"{model_name}_{exporter}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "inputs"))
    os.makedirs(os.path.join(folder, "expected"))
    torch.manual_seed(seed)
    model = cls(config)
    randomize(model, seed)
    # The dynamo exporter of PyTorch 2.4 cannot export batch normalization in training mode (it
    # updates the running statistics in place): such models export and differentiate in eval mode.
    has_batch_norm = any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())
    training = not (exporter == "dynamo" and has_batch_norm)
    model.train(training)
    buffers_before = {k: v.clone() for k, v in model.named_buffers()}
    g = torch.Generator().manual_seed(seed)
    inputs, axes = inputs_for(model_name, g)
    names = list(inputs)
    args = tuple(inputs[n] for n in names)
    wrapped = WithLoss(model, names) if config is not None else model  # custom modules return their loss
    path = os.path.join(folder, "model.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "ts":
            export_ts(wrapped, args, names, axes, path, training)
        else:
            export_dynamo(wrapped, args, path)
    proto = onnx.load(path)
    graph_inputs = [i.name for i in proto.graph.input if i.name not in initializer_names(proto)]
    if len(graph_inputs) != len(args):
        raise RuntimeError(f"the export has {len(graph_inputs)} inputs for {len(args)} arguments: {graph_inputs}")

    for k, v in model.named_buffers():  # exporting ran the model: put BatchNorm's statistics back
        v.copy_(buffers_before[k])
    model.zero_grad()
    loss = wrapped(*args)
    loss.backward()
    initializers = initializer_names(proto)
    grads, missing = [], []
    for pname, p in model.named_parameters():
        iname = onnx_name(pname, initializers)
        if iname is None:
            missing.append(pname)
            continue
        if p.grad is None:
            continue
        save_tensor(os.path.join(folder, "expected", iname + "_grad.pb"), p.grad.numpy(), iname + "_grad")
        grads.append(iname)
    for i, value in enumerate(args):
        save_tensor(os.path.join(folder, "inputs", f"input_{i}.pb"), value.numpy(), graph_inputs[i])
    manifest = {
        "model": "model.onnx",
        "exporter": exporter,
        "training_mode": training,
        "loss": proto.graph.output[0].name,
        "loss_value": float(loss.detach()),
        "inputs": dict(zip(graph_inputs, names)),
        "dims": dims_text(axes, inputs) if exporter == "ts" else "",
        "gradients": sorted(grads),
        "parameters_not_in_export": missing,
        "local_functions": len(proto.functions),
        "torch_version": torch.__version__,
        "transformers_version": tf.__version__,
    }
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(r, fn)) for r, _, fs in os.walk(folder) for fn in fs)
    print(f"{model_name}_{exporter}: {len(proto.graph.node)} nodes, {len(proto.functions)} functions, "
          f"{len(grads)} gradients, {len(missing)} parameters not in the export, {size} bytes")


def root_cause(error):
    """The exception an exporter's wrappers carry (the dynamo exporters wrap the real error)."""
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def first_line(error):
    message = str(error).strip().splitlines()
    return type(error).__name__ + ": " + (message[0] if message else "")


def write_failures(out, only, failures):
    """OUT/failures.json: `failures` by case, keeping the cases of models outside `only`."""
    path = os.path.join(out, "failures.json")
    old = json.load(open(path)) if only and os.path.exists(path) else {}
    old = {k: v for k, v in old.items() if k.rsplit("_", 1)[0] not in only}
    old.update(failures)
    with open(path, "w") as f:
        json.dump(dict(sorted(old.items())), f, indent=2)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "torch_exports"))
    parser.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    failures = {}
    cases = {**text_configs(), **vision_configs(), **ts_only_configs()}
    ts_only = set(ts_only_configs())
    for i, (name, (cls, config)) in enumerate(cases.items()):
        if only and name not in only:
            continue
        for exporter in ("ts",) if name in ts_only else ("ts", "dynamo"):
            try:
                export_case(args.out, name, exporter, cls, config, seed=200 + i)
            except Exception as e:  # the exporter's own failure: listed, not fatal
                shutil.rmtree(os.path.join(args.out, f"{name}_{exporter}"), ignore_errors=True)
                failures[f"{name}_{exporter}"] = {"error": first_line(root_cause(e)),
                                                  "where": traceback.format_exc().strip().splitlines()[-1]}
                print(f"{name}_{exporter}: exporter failed: {failures[name + '_' + exporter]['error']}")
    if os.path.exists("report_dynamo_export.sarif"):  # the dynamo exporter's report of its failures
        os.remove("report_dynamo_export.sarif")
    write_failures(args.out, only, failures)


if __name__ == "__main__":
    main()
