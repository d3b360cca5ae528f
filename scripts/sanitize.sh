#!/usr/bin/env bash
# Builds memopt with AddressSanitizer + UndefinedBehaviorSanitizer and runs the whole test suite
# under it (any report fails the test). With clang (and its libFuzzer runtime) the same build also
# holds the libFuzzer targets; FUZZ_SECONDS=N then runs each of them for N seconds
# (scripts/fuzz.sh on this build). Without clang, GCC's sanitizers are used and fuzzing is skipped.
# Usage: scripts/sanitize.sh [BUILD_DIR=build-san]
#   FUZZ_SECONDS (default 0), CTEST_JOBS (default: nproc), extra ctest args in CTEST_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-san}
jobs=${CTEST_JOBS:-$(nproc)}

fuzz=OFF
compiler=g++
linker=()
if command -v clang++ >/dev/null 2>&1; then
  compiler=clang++
  fuzz=ON
  # LLVM's linker links the sanitized binaries in a quarter of the time of the default one.
  command -v ld.lld >/dev/null 2>&1 && linker=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld)
fi
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# -O1: sanitizer builds are about checking, and -O1 keeps the build and the tests fast.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
      -DCMAKE_CXX_COMPILER="$compiler" -DMEMOPT_SANITIZE=address,undefined -DMEMOPT_FUZZ="$fuzz" -DMEMOPT_CUDA=OFF "${linker[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"

# allocator_may_return_null: a failed huge allocation returns null, so the tests see memopt's own
# "needs 4.00 TiB" error instead of ASan's abort.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
echo "memopt sanitize: running the test suite under ASan + UBSan ($compiler)" >&2
# shellcheck disable=SC2086
ctest --test-dir "$build" --output-on-failure -j "$jobs" ${CTEST_ARGS:-}

if [[ $fuzz == ON && ${FUZZ_SECONDS:-0} != 0 ]]; then
  echo "memopt sanitize: fuzzing each target for ${FUZZ_SECONDS}s" >&2
  bash scripts/fuzz.sh "$FUZZ_SECONDS" "$build"
fi
