#!/usr/bin/env bash
# The folders are layers (docs/architecture.md, "The folders are layers"): a file includes only
# headers of its own layer or of layers below it. The order, lowest first, is LAYERS below: lib/'s
# top-level folders, then the CUDA backend (cuda/ itself, the helpers its kernels share in
# cuda/kernels, the kernels by op family in cuda/ops), then the CLI (tools/). Every `#include "..."`
# of a non-test file is resolved the way the build resolves it (the including file's folder, then
# lib/, cuda/, cuda/kernels/) and must not reach up. Tests and their helpers (*_test.cc,
# *_test_util.h), which may reach up, are left out.
# Usage: scripts/check_folder_layers.sh [SOURCE_DIR]   (exit 1, listing every include that reaches up)
set -euo pipefail
src=${1:-"$(dirname "$0")/.."}
cd "$src"
LAYERS=(lib/util lib/sym lib/ir lib/shape lib/io lib/analysis lib/rewrite lib/exec lib/plan lib/grad lib/verify
        lib/report lib/ops lib/pipeline cuda cuda/kernels cuda/ops tools)
declare -A rank
for i in "${!LAYERS[@]}"; do rank[${LAYERS[$i]}]=$i; done

# layer_of PATH: the layer a source path belongs to.
layer_of() {
  case $1 in
    lib/*/*) local rest=${1#lib/}; echo "lib/${rest%%/*}" ;;
    lib/*) echo "lib" ;;
    cuda/kernels/*) echo "cuda/kernels" ;;
    cuda/ops/*) echo "cuda/ops" ;;
    cuda/*) echo "cuda" ;;
    tools/*) echo "tools" ;;
  esac
}

status=0
edges=0
while IFS= read -r file; do
  from=$(layer_of "$file")
  if [[ -z ${rank[$from]+x} ]]; then
    echo "$file: folder $from is not in the layer order (add it to LAYERS here and to docs/architecture.md)"
    status=1
    continue
  fi
  dir=$(dirname "$file")
  while IFS= read -r inc; do
    target=""
    for base in "$dir" lib cuda cuda/kernels; do
      if [[ -f $base/$inc ]]; then target=$base/$inc; break; fi
    done
    [[ -n $target ]] || continue  # a system or generated header
    to=$(layer_of "$target")
    [[ $to == "$from" || -z $to || -z ${rank[$to]+x} ]] && continue
    edges=$((edges + 1))
    if ((rank[$to] > rank[$from])); then
      echo "$file includes $target: $to is above $from in the layer order"
      status=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find lib cuda tools -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) \
           ! -name '*_test.cc' ! -name '*_test_util.h' ! -name 'cuda_test_util.h' | sort)
if ((status != 0)); then
  echo "layer order (lowest first): ${LAYERS[*]}"
  exit 1
fi
echo "$edges includes across layers, all downward (${LAYERS[*]})"
