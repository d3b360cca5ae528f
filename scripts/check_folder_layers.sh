#!/usr/bin/env bash
# The top-level folders of lib/ form no include cycle (they are layers, docs/architecture.md): each
# `#include "a/..."` in a file under lib/F/ is an edge F -> a (tests and their helpers, which may
# reach up, left out); tsort finds any loop.
# Usage: scripts/check_folder_layers.sh [LIB_DIR]   (exit 1 and the loop on a cycle)
set -euo pipefail
lib=${1:-"$(dirname "$0")/../lib"}
cd "$lib"
edges=$(grep -rHo --include='*.h' --include='*.cc' --include='*.cu' --include='*.cuh' --exclude='*_test.cc' --exclude='*_test_util.h' '^#include "[a-z_/]*/[a-z_0-9]*\.[a-z]*"' . |
  sed -E 's|^\./||; s|^([^/]*)/[^:]*:#include "([^/]*)/.*"$|\1 \2|' | awk '$1 != $2' | sort -u)
out=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null || true)
if [[ -n "$out" ]]; then
  echo "folder-level include cycle in lib/:"
  echo "$out" | grep -v '^tsort: -: input contains a loop:' | sed 's/^tsort: /  /'
  exit 1
fi
echo "lib/: $(printf '%s\n' "$edges" | wc -l) folder edges, no cycle"
