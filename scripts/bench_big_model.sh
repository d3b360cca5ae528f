#!/usr/bin/env bash
# Peak RSS and wall time of grad / scan / plan / apply on generated training graphs whose weights
# are 2.5 GB, 10 GB and 40 GB (sparse files: no disk used), to show that memopt's memory follows
# the graph, not the weights. Prints one table per size.
# Usage: scripts/bench_big_model.sh [BUILD_DIR=build] [LAYERS...=20 80 320]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
sizes=("$@")
((${#sizes[@]})) || sizes=(20 80 320)
cmake --build "$build" --target memopt make_big_model >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for layers in "${sizes[@]}"; do
  echo "== $layers layers"
  RSS_LIMIT_MIB=${RSS_LIMIT_MIB:-4096} bash tests/big_model/check_big_model.sh "$build/tools/memopt" \
    "$build/tests/make_big_model" "$work/$layers" "$layers"
  echo
done
