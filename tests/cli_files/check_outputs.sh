#!/usr/bin/env bash
# Output files as GNU tools treat them, and runs that never end on a signal (issue: "What a real
# user hits"). Usage: check_outputs.sh MEMOPT MAKE_BIG_MODEL SRC_DIR WORK_DIR
#   -o through a symlink updates the target and keeps the link; -o to a FIFO and to character
#   devices keeps them and delivers the bytes; a full device and a full stdout give exit 1;
#   -o - gives stdout the output alone; models are read from stdin with '-';
#   a model truncated while run/bench/apply read it is an error naming it, never a signal;
#   a tensor larger than the address space is an error under `ulimit -v`, for every subcommand.
set -u
memopt=$1 gen=$2 src=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

"$memopt" grad "$src/tests/data/grad_fixtures/gpt2_tiny/model.onnx" -o train.onnx >/dev/null || { echo "FAIL: grad"; exit 1; }
"$memopt" plan train.onnx --level 1 -o expected.json >/dev/null || { echo "FAIL: plan"; exit 1; }

# Symlinks, relative and in a chain.
mkdir real && echo stale >real/config.json && ln -s real/config.json link.json && ln -s "$PWD/link.json" link2.json
"$memopt" plan train.onnx --level 1 -o link2.json >/dev/null
if [[ -L link.json && -L link2.json && -f real/config.json ]] && cmp -s real/config.json expected.json; then
  ok "-o through a symlink chain updates the target and keeps the links"
else
  fail "-o through a symlink: $(ls -l link.json link2.json real/config.json 2>&1 | tr '\n' ' ')"
fi

# A FIFO.
mkfifo pipe
cat pipe >from_pipe &
reader=$!
"$memopt" plan train.onnx --level 1 -o pipe >/dev/null
wait $reader
if [[ -p pipe ]] && cmp -s from_pipe expected.json; then ok "-o FIFO delivers the bytes and stays a FIFO"
else fail "-o FIFO: $(ls -l pipe) $(wc -c <from_pipe) bytes received"; fi

# Character devices: made with mknod where we may (root), else the system's own (which an
# unprivileged process cannot rename over anyway).
if mknod null c 1 3 2>/dev/null && mknod full c 1 7 2>/dev/null; then null=$PWD/null full=$PWD/full; where="mknod"
else null=/dev/null full=/dev/full; where="system"; fi
"$memopt" scan train.onnx -o "$null"
rc=$?
if [[ $rc == 0 && -c $null ]]; then ok "-o character device ($where null) stays a device"
else fail "-o $null: exit $rc, $(ls -l "$null")"; fi
"$memopt" apply train.onnx --config expected.json -o "$null" >/dev/null
rc=$?
[[ $rc == 0 && -c $null ]] && ok "apply -o $where null" || fail "apply -o $null: exit $rc"
err=$("$memopt" plan train.onnx --level 1 -o "$full" 2>&1 >/dev/null)
rc=$?
if [[ $rc == 1 && -c $full && $err == *"No space left on device"* ]]; then ok "-o full device: exit 1 ($err)"
else fail "-o $full: exit $rc, '$err'"; fi
err=$("$memopt" scan train.onnx 2>&1 >/dev/full)
rc=$?
if [[ $rc == 1 && $err == *"cannot write to standard output"* ]]; then ok "stdout on a full device: exit 1"
else fail "scan >/dev/full: exit $rc, '$err'"; fi

# -o -: stdout carries the output alone, the report goes to stderr.
"$memopt" plan train.onnx --level 1 -o - >stdout.json 2>stderr.txt
if cmp -s stdout.json expected.json && grep -q "Peak memory" stderr.txt; then ok "plan -o -: config on stdout, report on stderr"
else fail "plan -o -: stdout $(head -c 60 stdout.json | tr '\n' ' ')"; fi
"$memopt" apply train.onnx --config expected.json -o - >stdout.onnx 2>stderr.txt
"$memopt" apply train.onnx --config expected.json -o file.onnx >/dev/null
if cmp -s stdout.onnx file.onnx && grep -q "Peak memory" stderr.txt; then ok "apply -o -: model on stdout, report on stderr"
else fail "apply -o -: $(wc -c <stdout.onnx) bytes vs $(wc -c <file.onnx)"; fi

# Folders.
mkdir folder
err=$("$memopt" scan train.onnx -o folder 2>&1); rc=$?
[[ $rc == 1 && $err == *"is a directory"* ]] && ok "-o folder: $err" || fail "-o folder: exit $rc '$err'"
err=$("$memopt" plan train.onnx --level 1 -o newdir/ 2>&1); rc=$?
[[ $rc == 1 && $err == *"names a folder"* ]] && ok "-o newdir/: $err" || fail "-o newdir/: exit $rc '$err'"

# Models from stdin.
"$memopt" scan train.onnx >from_file.txt
"$memopt" scan - <train.onnx >from_stdin.txt
rc=$?
if [[ $rc == 0 ]] && diff -q <(tail -n +2 from_file.txt) <(tail -n +2 from_stdin.txt) >/dev/null; then
  ok "scan - reads the model from stdin"
else fail "scan -: exit $rc"; fi

# A model truncated while it is read: never a signal.
mkdir big
"$gen" big --layers 2 --hidden 512 --ffn 8192 --inline >/dev/null || { echo "FAIL: make_big_model"; exit 1; }
"$memopt" grad big/forward_inline.onnx -o big.onnx >/dev/null || { echo "FAIL: grad big"; exit 1; }
echo '["Gelu+:1:-1"]' >gelu.json
echo '[]' >empty.json
size=$(stat -c %s big.onnx)
changed=0 trials=0
for cmd in "run" "bench --iters 2 --warmup 0" "apply --config gelu.json -o out.onnx"; do
  read -r -a words <<<"$cmd"
  for delay in 0.01 0.03 0.06 0.1 0.15; do
    cp big.onnx victim.onnx
    "$memopt" "${words[0]}" victim.onnx "${words[@]:1}" --dims batch=4 >/dev/null 2>err.txt &
    pid=$!
    sleep "$delay"
    truncate -s $((size / 3)) victim.onnx
    wait $pid
    rc=$?
    trials=$((trials + 1))
    if ((rc >= 128)); then fail "${words[0]} with the model truncated after ${delay}s: exit $rc $(head -c 200 err.txt)"; fi
    grep -q "changed while memopt read it" err.txt && changed=$((changed + 1))
    [[ ${words[0]} == apply && $rc != 0 && -e out.onnx ]] && fail "apply left out.onnx although it failed"
    rm -f out.onnx
  done
done
ok "model truncated during run/bench/apply: no signal in $trials trials ($changed reported 'changed while memopt read it')"

# Every subcommand on every model of the bad-input corpus: an error line or a result, never a signal.
signalled=0
for model in "$src"/tests/data/bad/*.onnx "$src"/tests/data/run/*.onnx; do
  for cmd in "scan" "plan --level 1" "plan --budget 0.5" "run" "bench --iters 1 --warmup 0" "grad -o corpus_grad.onnx" \
             "apply --config empty.json -o corpus_apply.onnx --verify"; do
    read -r -a words <<<"$cmd"
    timeout 120 "$memopt" "${words[0]}" "$model" "${words[@]:1}" >/dev/null 2>err.txt
    rc=$?
    if ((rc >= 124)); then fail "$cmd $(basename "$model"): exit $rc $(head -c 200 err.txt)"; signalled=1; fi
  done
done
((signalled == 0)) && ok "bad-input corpus: every subcommand ends with an exit code, never a signal"

# Allocation failures under a low address-space limit: one error line, exit 1, for every subcommand.
# (A sanitizer build reserves terabytes of shadow address space at start: it cannot run there.)
if nm "$memopt" 2>/dev/null | grep -q "__asan_init"; then
  echo "skip ulimit -v checks: $memopt is built with AddressSanitizer"
  ((failures == 0)) || exit 1
  exit 0
fi
protoc_model=$src/tests/data/run/huge_input.onnx
for cmd in "scan" "plan --level 1" "plan --budget 0.5" "apply --config empty.json -o huge_out.onnx --verify" "run" \
           "bench --iters 1 --warmup 0" "grad -o huge_grad.onnx --trainable x"; do
  read -r -a words <<<"$cmd"
  err=$( (ulimit -v 1500000; "$memopt" "${words[0]}" "$protoc_model" "${words[@]:1}" 2>&1 >/dev/null) )
  rc=$?
  errors=$(printf '%s\n' "$err" | grep -c "memopt: error:")
  case ${words[0]} in
    run | bench | apply) good=$([[ $rc == 1 && $errors == 1 && $err == *"needs 4.00 TiB"* ]] && echo 1) ;;
    *) good=$([[ $rc -lt 128 && ($rc == 0 || $errors == 1) ]] && echo 1) ;;
  esac
  if [[ $good == 1 ]]; then ok "ulimit -v: $cmd: exit $rc $(printf '%s' "$err" | grep "memopt: error" | head -c 150)"
  else fail "ulimit -v: $cmd: exit $rc '$err'"; fi
done

((failures == 0)) || exit 1
