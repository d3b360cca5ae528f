#!/usr/bin/env bash
# The GPU acceptance run: the CUDA unit tests, the kernel bandwidth table, and a bench matrix of a
# GPT-2-small-sized training graph (12 layers, hidden 768, vocab 50257, float16) at batch 8,
# seq 1024: memopt's original graph vs its level-1 plan vs a budget plan, measured on the GPU, and
# beside them the same step in PyTorch eager, plain and with per-layer torch.utils.checkpoint
# (scripts/torch_gpt2_bench.py), printed as one table: peak memory (memopt's pool peak vs
# torch.cuda.max_memory_allocated) and step time.
#
# Usage: scripts/gpu_bench.sh [PACK_DIR] [OUT_DIR=gpu-bench]
#   PACK_DIR holds memopt, memopt_unit_tests and memopt_kernel_bench (launchers or binaries):
#   make it on the build machine with
#     PACK_EXTRA="build/tests/memopt_unit_tests build/cuda/memopt_kernel_bench" scripts/pack.sh build dist/gpu
#   Without PACK_DIR the binaries of build/ are used. cuBLAS is found where the loader finds it,
#   else in the python3's NVIDIA wheels (nvidia-cublas, which PyTorch brings), else pack it with
#   PACK_CUBLAS=1.
# Environment: MODEL (default: OUT_DIR/gpt2_training.onnx, generated with
#   scripts/gen_transformer_training.py from LAYERS (12), HIDDEN (768), HEADS (12), VOCAB (50257),
#   DTYPE (float16) when python3 has the onnx package; a MODEL passed in must have that shape for
#   the PyTorch rows to compare), DIMS (batch=8,seq_len=1024), BUDGET (0.6 of the original peak),
#   ITERS (10), WARMUP (3), SKIP_TESTS=1, SKIP_KERNELS=1, SKIP_TORCH=1, PYTHON (python3),
#   DEVICE (cuda; cpu makes a dry run of the whole matrix, PyTorch half included, on the CPU
#   reference executor and PyTorch's CPU, e.g. with LAYERS=2 HIDDEN=64 HEADS=4 VOCAB=500
#   DTYPE=float DIMS=batch=2,seq_len=32; the tests and kernels then need SKIP_TESTS=1 SKIP_KERNELS=1).
# Exit status: 1 when a step fails (the table shows which), 4 when no GPU is usable.
set -uo pipefail
cd "$(dirname "$0")/.."
pack=${1:-}
out=${2:-gpu-bench}
dims=${DIMS:-batch=8,seq_len=1024}
budget=${BUDGET:-0.6}
iters=${ITERS:-10}
warmup=${WARMUP:-3}
device=${DEVICE:-cuda}
python=${PYTHON:-python3}
layers=${LAYERS:-12} hidden=${HIDDEN:-768} heads=${HEADS:-12} vocab=${VOCAB:-50257} dtype=${DTYPE:-float16}
mkdir -p "$out"

dim() {  # the value of one name in DIMS
  tr ',' '\n' <<<"$dims" | awk -F= -v want="$1" '$1 == want { print $2 }'
}

# cuBLAS (dlopened by the CUDA backend): from the NVIDIA wheels of python3 where the loader has none.
if [[ $device == cuda ]] && ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so\.[0-9]'; then
  cublas_dir=$("$python" - <<'PY' 2>/dev/null
import glob, os, site
for root in site.getsitepackages():
    hits = sorted(glob.glob(os.path.join(root, "nvidia", "**", "libcublas.so.*"), recursive=True))
    if hits:
        print(os.path.dirname(hits[0]))
        break
PY
  )
  if [[ -n $cublas_dir ]]; then
    export LD_LIBRARY_PATH="$cublas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "gpu_bench.sh: cuBLAS from $cublas_dir" >&2
  fi
fi

if [[ -n $pack ]]; then
  memopt=$pack/memopt tests=$pack/memopt_unit_tests kbench=$pack/memopt_kernel_bench
else
  memopt=build/tools/memopt tests=build/tests/memopt_unit_tests kbench=build/cuda/memopt_kernel_bench
fi
status=0
step() { echo "== $*" >&2; }

if [[ ${SKIP_TESTS:-0} != 1 ]]; then
  step "CUDA unit tests ([cuda] tag)"
  "$tests" "[cuda]" --reporter compact 2>&1 | tee "$out/unit_tests.txt" | tail -n 3
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
  if grep -q "skipped: " "$out/unit_tests.txt"; then
    echo "gpu_bench.sh: the GPU tests skipped (no usable GPU?)" >&2
  fi
fi

if [[ ${SKIP_KERNELS:-0} != 1 ]]; then
  step "kernel bandwidth"
  "$kbench" --iters "${KERNEL_ITERS:-20}" | tee "$out/kernels.txt"
  rc=${PIPESTATUS[0]}
  [[ $rc == 4 ]] && exit 4
  [[ $rc == 0 ]] || status=1
fi

model=${MODEL:-$out/gpt2_training.onnx}
if [[ ! -f $model ]]; then
  step "generating $model"
  "$python" scripts/gen_transformer_training.py --layers "$layers" --hidden "$hidden" --heads "$heads" \
    --vocab "$vocab" --dtype "$dtype" --out "$model" >&2 ||
    { echo "gpu_bench.sh: cannot generate $model; pass MODEL" >&2; exit 1; }
fi

step "plans"
"$memopt" plan "$model" --level 1 --dims "$dims" -o "$out/level1.json" >"$out/plan_level1.txt" || status=1
"$memopt" plan "$model" --budget "$budget" --dims "$dims" -o "$out/budget.json" >"$out/plan_budget.txt"
case $? in
  0) ;;
  3) echo "gpu_bench.sh: budget $budget not met statically; benchmarking the best plan found" >&2 ;;
  *) status=1 ;;
esac
"$memopt" apply "$model" --config "$out/level1.json" -o "$out/level1.onnx" >/dev/null || status=1
"$memopt" apply "$model" --config "$out/budget.json" -o "$out/budget.onnx" >/dev/null || status=1

# One bench per rewritten model against the original (same inputs, outputs compared).
for variant in level1 budget; do
  step "bench original vs $variant"
  "$memopt" bench "$model" "$out/$variant.onnx" --device "$device" --dims "$dims" --iters "$iters" \
    --warmup "$warmup" >"$out/bench_$variant.txt"
  rc=$?
  [[ $rc == 4 ]] && { cat "$out/bench_$variant.txt"; exit 4; }
  [[ $rc == 0 ]] || status=1
done

# The PyTorch half: the same step in PyTorch eager, plain (SDPA), with attention materialised
# (attn_implementation="eager", as memopt's graphs hold it) and checkpointed per layer.
if [[ ${SKIP_TORCH:-0} != 1 ]]; then
  step "PyTorch eager, plain, materialised attention and checkpointed"
  "$python" scripts/torch_gpt2_bench.py --layers "$layers" --hidden "$hidden" --heads "$heads" --vocab "$vocab" \
    --batch "$(dim batch)" --seq "$(dim seq_len)" --dtype "$dtype" --device "$device" --iters "$iters" \
    --warmup "$warmup" >"$out/torch.txt" || status=1
fi

# The table: one row per model, from the bench reports' fixed lines.
row() {  # file, model index (1 or 2), label
  awk -v want="$2" -v label="$3" '
    /^model [0-9]+:/ { m = $2 + 0 }
    m == want && /measured peak:/ { est = $3 " " $4 }
    m == want && /GPU pool peak:/ {
      req = $5 " " $6; ratio = $9; resv = $14 " " $15
      req_b = $7; resv_b = $16; gsub(/[(,]/, "", req_b); gsub(/[(,]/, "", resv_b)
      # reserved / estimate = reserved / requested x requested / estimate
      if (req_b + 0 > 0) resv_ratio = sprintf("%.3f", resv_b / req_b * ratio)
    }
    m == want && /step time:/ { med = $4; p95 = $10 }
    END { printf "%-10s %12s %14s %9s %14s %9s %10s %10s", label, est, req, ratio, resv, resv_ratio, med, p95 }' "$1"
}
base_ms() { awk '/^model 1:/ { m = 1 } /^model 2:/ { m = 2 } m == 1 && /step time:/ { print $4 }' "$1"; }
echo
printf '%-10s %12s %14s %9s %14s %9s %10s %10s %9s %12s\n' model "estimate" "pool requested" "req/est" "pool reserved" \
  "resv/est" "median ms" "p95 ms" "overhead" "max diff"
if [[ -f $out/bench_level1.txt ]]; then
  printf '%s %9s %12s\n' "$(row "$out/bench_level1.txt" 1 original)" "-" "-"
fi
for variant in level1 budget; do
  f=$out/bench_$variant.txt
  [[ -s $f ]] || { printf '%-10s (failed: see %s)\n' "$variant" "$f"; continue; }
  base=$(base_ms "$f")
  mine=$(awk '/^model 2:/ { m = 2 } m == 2 && /step time:/ { print $4 }' "$f")
  overhead=$(awk -v a="$base" -v b="$mine" 'BEGIN { if (a > 0) printf "%+.1f%%", 100 * (b - a) / a; else print "-" }')
  diff=$(awk '/max abs diff:/ { print $4 }' "$f")
  printf '%s %9s %12s\n' "$(row "$f" 2 "$variant")" "$overhead" "$diff"
done
# PyTorch rows: its allocator's peaks stand in the pool columns; overhead against PyTorch plain.
if [[ -s $out/torch.txt ]]; then
  awk '/^torch / {
      name = $2; sub(":", "", name); alloc = $5 " " $6; resv = $9 " " $10; med = $12; p95 = $15
      sub(",", "", alloc); sub(",", "", resv)
      if (alloc ~ /^-/) alloc = "-"
      if (resv ~ /^-/) resv = "-"
      name = (name == "plain") ? "torch" : (name == "eager" ? "torch-eager" : "torch-ckpt")
      if (name == "torch") base = med
      over = (name != "torch" && base > 0) ? sprintf("%+.1f%%", 100 * (med - base) / base) : "-"
      printf "%-10s %12s %14s %9s %14s %9s %10s %10s %9s %12s\n", name, "-", alloc, "-", resv, "-", med, p95, over, "-"
    }' "$out/torch.txt"
elif [[ ${SKIP_TORCH:-0} != 1 ]]; then
  printf '%-10s (failed: see %s)\n' torch "$out/torch.txt"
fi
exit $status
