#!/usr/bin/env bash
# Installs memopt's build dependencies from Debian packages and builds it into ./build.
# Usage: scripts/setup.sh [extra cmake args...]   (run as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config
          libonnx-dev libprotobuf-dev protobuf-compiler
          libcli11-dev nlohmann-json3-dev libfmt-dev catch2 libopenblas-dev libglpk-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "memopt setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA toolkit is optional; its usual location is added to PATH when nvcc is not on it.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j "$(nproc)"
echo "memopt setup: built build/tools/memopt" >&2
