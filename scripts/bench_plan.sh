#!/usr/bin/env bash
# The budget planner against its anchors, on synthetic GPT-2-style training graphs
# (scripts/gen_transformer_training.py), the training graphs `memopt grad` builds from the tiny
# GPT-2, BERT and Llama fixtures, and ORT's BLOOM graph when ../shared/data is present:
#
#   * planner time of `plan --budget` (the integer program) at 12..96 layers and at 1316 layers
#     (100,047 nodes), its optimality or gap, and of the greedy search where it finishes in
#     reasonable time (BENCH_GREEDY_MAX_LAYERS); the growth of the integer program's time with the
#     node count (least-squares exponent over the synthetic graphs);
#   * at the peak of ORT level 1, of level 2 (`plan --level 1|2`) and of per-block checkpointing
#     (every activation inside each transformer layer recomputed from the layer input, PyTorch's
#     checkpoint(layer); `plan --sweep`'s reference point): the compute memopt's budget plan adds
#     to reach the same peak, as a ratio to what the reference adds;
#   * at budgets 0.9 and 0.7: the integer program's added compute as a ratio to the greedy
#     search's (below 1 = better).
# "Compute" is the cost model's estimated time of the recomputed nodes (docs/plan.md), the
# planner's default objective.
#
# Prints one markdown table (docs/benchmarks.md keeps the last one). A benchmark, not a test: it
# exits 0 whatever the numbers are, non-zero when a command fails.
#   scripts/bench_plan.sh [MEMOPT]    env: BENCH_LAYERS ("12 24 48 96 1316"), BENCH_DIMS, BENCH_DIR,
#                                          BENCH_GREEDY_MAX_LAYERS (24), PYTHON (needs onnx)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
memopt=${1:-$here/build/tools/memopt}
layers=${BENCH_LAYERS:-12 24 48 96 1316}
dims=${BENCH_DIMS:-batch=8,seq_len=1024}
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/memopt_bench_plan}
greedy_max=${BENCH_GREEDY_MAX_LAYERS:-24}
python=${PYTHON:-python3}
mkdir -p "$dir"

# plan ARGS... -> "seconds peak_bytes added_compute met optimality" (exit 3, budget not met, is a
# result; optimality is "optimal", a gap like "gap=3.2%" or "-" without a budget); the
# added compute is the objective the planner minimises by default: the cost model's time.
plan() {
  local out start end rc=0
  start=$(date +%s.%N)
  out=$("$memopt" -qq plan "$@" --format json -o /dev/null 2>"$dir/plan.stderr") || rc=$?
  end=$(date +%s.%N)
  if [[ $rc != 0 && $rc != 3 ]]; then
    echo "bench_plan: memopt plan $* failed (exit $rc)" >&2
    cat "$dir/plan.stderr" >&2
    exit 1
  fi
  printf '%s' "$out" | "$python" -c "
import json, sys
j = json.load(sys.stdin)
b = j['budget'] or {}
opt = '-'
if b.get('planner') == 'integer program':
    q = b.get('optimality', '')
    opt = 'optimal' if q.startswith('optimal') else ('gap=%.1f%%' % (100 * b['gap']) if b.get('gap') is not None else 'no bound')
print('%.3f %d %.9g %s %s' % ($end - $start, j['peak']['bytes'], j['rewritten']['added_seconds_estimate'], b.get('met', True), opt))"
}

# checkpoint_ref ARGS... -> "peak_bytes added_compute" of per-block checkpointing (plan --sweep's
# reference point; the planner's checkpoint plans are off, which leaves that point as it is and
# keeps the sweep fast on deep graphs), or "- -" for a graph without transformer layers.
checkpoint_ref() {
  "$memopt" -qq plan "$@" --sweep --sweep-points 2 --checkpoints off --format json -o - | "$python" -c "
import json, sys
refs = [r for r in json.load(sys.stdin)['references'] if r['label'] == 'per-block checkpointing']
print('%d %.9g' % (refs[0]['peak'], refs[0]['added_seconds_estimate']) if refs else '- -')"
}

ratio() { "$python" -c "a, b = $1, $2; print('%.3f' % (a / b) if b else ('1.000' if a == 0 else 'inf'))"; }

models=()
for l in $layers; do
  f=$dir/gpt_${l}.onnx
  [[ -f $f ]] || "$python" "$here/scripts/gen_transformer_training.py" --layers "$l" --out "$f" >/dev/null
  models+=("$f|$dims|$l")
done
# The training graphs `memopt grad` builds from the PyTorch-exported fixtures (fixed shapes).
for fixture in gpt2_tiny bert_tiny llama_tiny; do
  f=$dir/grad_${fixture}.onnx
  "$memopt" -qq grad "$here/tests/data/grad_fixtures/$fixture/model.onnx" -o "$f" >/dev/null
  models+=("$f||grad_$fixture")
done
bloom=$here/../shared/data/ort_recompute/3layer_bloom_optimized_training.onnx
if [[ -f $bloom ]]; then
  models+=("$bloom|inputs_input_ids_dim0=8,inputs_attention_mask_dim1=512,inputs_attention_mask_dim0=8,inputs_labels_dim0=8,inputs_labels_dim1=512|bloom")
fi

echo "| graph | nodes | ilp s (0.7) | ilp optimality (0.7) | greedy s (0.7) | ilp/greedy compute (0.9) | ilp/greedy compute (0.7) | ilp/level 1 compute at level 1's peak | ilp/level 2 compute at level 2's peak | ilp/checkpointing compute at its peak |"
echo "|---|---|---|---|---|---|---|---|---|---|"
growth=()
for m in "${models[@]}"; do
  IFS='|' read -r f d name <<<"$m"
  nodes=$("$memopt" -qq scan "$f" --dims "$d" --format json | "$python" -c "import json,sys; print(json.load(sys.stdin)['model']['nodes'])")
  read -r t_ilp7 _ c_ilp7 _ opt7 <<<"$(plan "$f" --dims "$d" --budget 0.7)"
  [[ $name =~ ^[0-9]+$ ]] && growth+=("$nodes $t_ilp7")
  read -r _ _ c_ilp9 _ <<<"$(plan "$f" --dims "$d" --budget 0.9)"
  greedy_t="-" r7="-" r9="-"
  if ! [[ $name =~ ^[0-9]+$ ]] || ((name <= greedy_max)); then
    read -r greedy_t _ c_g7 _ <<<"$(plan "$f" --dims "$d" --budget 0.7 --planner greedy)"
    read -r _ _ c_g9 _ <<<"$(plan "$f" --dims "$d" --budget 0.9 --planner greedy)"
    r7=$(ratio "$c_ilp7" "$c_g7")
    r9=$(ratio "$c_ilp9" "$c_g9")
  fi
  levels=()
  for level in 1 2; do
    read -r _ p_l c_l _ <<<"$(plan "$f" --dims "$d" --level "$level")"
    read -r _ p_b c_b met _ <<<"$(plan "$f" --dims "$d" --level "$level" --budget "$p_l")"
    levels+=("$(ratio "$c_b" "$c_l")$([[ $met == True ]] || echo ' (not met)')")
  done
  ckpt="-"
  read -r p_c c_c <<<"$(checkpoint_ref "$f" --dims "$d")"
  if [[ $p_c != - ]]; then
    read -r _ _ c_b met _ <<<"$(plan "$f" --dims "$d" --budget "$p_c")"
    ckpt="$(ratio "$c_b" "$c_c")$([[ $met == True ]] || echo ' (not met)')"
  fi
  echo "| $(basename "$f" .onnx) | $nodes | $t_ilp7 | $opt7 | $greedy_t | $r9 | $r7 | ${levels[0]} | ${levels[1]} | $ckpt |"
done
if ((${#growth[@]} >= 2)); then
  printf '%s\n' "${growth[@]}" | "$python" -c "
import math, sys
pts = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
xs = [math.log(n) for n, t in pts]; ys = [math.log(max(t, 1e-3)) for n, t in pts]
mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
print()
print('integer program time ~ nodes^%.2f (least squares over %d synthetic graphs, %d to %d nodes)' % (k, len(pts), min(n for n, _ in pts), max(n for n, _ in pts)))"
fi
