#!/usr/bin/env bash
# Ctrl-C while `memopt apply` is writing leaves no partial output: the signal is sent the moment a
# temporary appears in the output folder (apply copies a 512 MB dense external-data file there,
# then writes the model), and then memopt must exit 130 with no temporary and no model file left;
# an external-data file that was already committed must be whole.
# Usage: check_interrupt_apply.sh MEMOPT MAKE_BIG_MODEL WORK_DIR
set -u
memopt=$1 gen=$2 work=$3
rm -rf "$work"
mkdir -p "$work/src" "$work/out"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 4 layers of H=2048, F=8192: 512 MiB of weights, written densely so the copy takes real time.
"$gen" "$work/src" --layers 4 >/dev/null || fail "make_big_model"
size=$(stat -c %s "$work/src/weights.bin")
dd if=/dev/zero of="$work/src/weights.bin" bs=1M count=$((size / 1048576)) conv=notrunc status=none || fail "dd"
"$memopt" grad "$work/src/forward.onnx" -o "$work/src/training.onnx" >/dev/null || fail "grad"
"$memopt" plan "$work/src/training.onnx" --level 1 --dims batch=64 -o "$work/src/plan.json" >/dev/null || fail "plan"

"$memopt" apply "$work/src/training.onnx" --config "$work/src/plan.json" --dims batch=64 \
  -o "$work/out/rewritten.onnx" >"$work/stdout" 2>"$work/stderr" &
pid=$!
seen=""
for _ in $(seq 3000); do  # up to 30 s
  seen=$(find "$work/out" -maxdepth 1 -name '.*.tmp.*' -print -quit)
  [[ -n $seen ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
[[ -n $seen ]] || { wait "$pid"; fail "no temporary appeared in the output folder (apply exit $?)"; }
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc == 130 ]] || { cat "$work/stderr"; fail "exit $rc, expected 130 (signal sent while writing $(basename "$seen"))"; }
grep -q "memopt: interrupted" "$work/stderr" || fail "no interrupt message"
left=$(find "$work/out" -maxdepth 1 -name '.*.tmp.*' | wc -l)
((left == 0)) || fail "$left temporaries left in the output folder"
[[ ! -e $work/out/rewritten.onnx ]] || fail "rewritten.onnx was written although apply was interrupted"
if [[ -e $work/out/weights.bin ]]; then
  [[ $(stat -c %s "$work/out/weights.bin") == "$size" ]] || fail "a partial weights.bin was left"
fi
echo "ok   apply: interrupted while writing $(basename "$seen"): exit 130, no partial output"
