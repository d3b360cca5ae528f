#!/usr/bin/env bash
# Packs the memopt binary with the shared libraries it needs that a bare machine may lack (onnx,
# protobuf, fmt, OpenBLAS, the C++ runtime, ...), so that it runs where the Debian packages are
# not installed (e.g. a GPU machine with only a driver). glibc's own libraries and the CUDA
# driver (libcuda.so, which must match the machine's kernel module) are left out.
# cuBLAS is loaded at run time by `bench --device cuda` only; PACK_CUBLAS=1 adds libcublas and
# libcublasLt (several hundred MB) for GPU machines that have a driver but no CUDA toolkit.
# Usage: scripts/pack.sh [BUILD_DIR=build] [OUT_DIR=BUILD_DIR/memopt-pack]
# Result: OUT_DIR/memopt (a launcher), OUT_DIR/bin/memopt, OUT_DIR/lib/*.so*; copy OUT_DIR anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-$build/memopt-pack}
binary=$build/tools/memopt
[[ -x $binary ]] || { echo "pack.sh: $binary not found; build first (scripts/setup.sh)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$binary" "$out/bin/memopt"
# glibc and the dynamic loader come with every Linux; the CUDA driver comes with the GPU.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libpthread\.|libdl\.|librt\.|libresolv\.|libutil\.|libcuda\.)'
ldd "$binary" | awk '/=> \// { print $1, $3 }' | while read -r name path; do
  if [[ $name =~ $skip ]]; then continue; fi
  cp -L "$path" "$out/lib/$name"
done
cat >"$out/memopt" <<'LAUNCH'
#!/bin/sh
# Runs the packed memopt with its own libraries first on the search path.
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/bin/memopt" "$@"
LAUNCH
chmod +x "$out/memopt"
# Every packed library must be the one the packed binary loads.
packed=$(ls "$out/lib" | wc -l)  # (before the optional cuBLAS, which the binary dlopens)
resolved=$(LD_LIBRARY_PATH="$out/lib" ldd "$out/bin/memopt" | grep -c "=> $out/lib/" || true)
if [[ $resolved != "$packed" ]]; then
  echo "pack.sh: only $resolved of $packed packed libraries resolve inside $out/lib" >&2
  exit 1
fi
if [[ ${PACK_CUBLAS:-0} == 1 ]]; then
  found=0
  for dir in $(ldconfig -p | awk '/libcublas(Lt)?\.so\.[0-9]+ / { print $NF }' | xargs -r -n1 dirname | sort -u) \
             /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    for lib in "$dir"/libcublas.so.[0-9]* "$dir"/libcublasLt.so.[0-9]*; do
      [[ -f $lib && $lib =~ \.so\.[0-9]+$ ]] || continue
      cp -L "$lib" "$out/lib/" && found=1
    done
    ((found)) && break
  done
  ((found)) || { echo "pack.sh: PACK_CUBLAS=1 but no libcublas.so.N found" >&2; exit 1; }
fi
"$out/memopt" --version >/dev/null
echo "pack.sh: $out ($packed libraries, $(du -sh "$out" | cut -f1))" >&2
