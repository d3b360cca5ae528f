#!/usr/bin/env bash
# Packs the memopt binary with the shared libraries it needs that a bare machine may lack (onnx,
# protobuf, fmt, OpenBLAS, the C++ runtime, ...), so that it runs where the Debian packages are
# not installed (e.g. a GPU machine with only a driver). glibc's own libraries and the CUDA
# driver (libcuda.so, which must match the machine's kernel module) are left out.
# cuBLAS is loaded at run time by `bench --device cuda` only; PACK_CUBLAS=1 adds libcublas and
# libcublasLt (several hundred MB) for GPU machines that have a driver but no CUDA toolkit.
# PACK_EXTRA="path/to/bin ..." packs more binaries of the build the same way (a launcher each),
# e.g. the unit tests and memopt_kernel_bench for scripts/gpu_bench.sh on a GPU machine.
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
# glibc and the dynamic loader come with every Linux; the CUDA driver comes with the GPU.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libpthread\.|libdl\.|librt\.|libresolv\.|libutil\.|libcuda\.)'
# shellcheck disable=SC2206
binaries=("$binary" ${PACK_EXTRA:-})
for bin in "${binaries[@]}"; do
  [[ -x $bin ]] || { echo "pack.sh: $bin not found" >&2; exit 1; }
  name=$(basename "$bin")
  cp "$bin" "$out/bin/$name"
  ldd "$bin" | awk '/=> \// { print $1, $3 }' | while read -r lib path; do
    if [[ $lib =~ $skip || -e $out/lib/$lib ]]; then continue; fi
    cp -L "$path" "$out/lib/$lib"
  done
  # A launcher that puts the packed libraries first on the search path.
  cat >"$out/$name" <<LAUNCH
#!/bin/sh
here=\$(dirname "\$(readlink -f "\$0")")
LD_LIBRARY_PATH="\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$here/bin/$name" "\$@"
LAUNCH
  chmod +x "$out/$name"
done
# Every library a packed binary needs must resolve inside the pack.
packed=$(ls "$out/lib" | wc -l)  # (before the optional cuBLAS, which the binaries dlopen)
for bin in "$out"/bin/*; do
  missing=$(LD_LIBRARY_PATH="$out/lib" ldd "$bin" | awk -v dir="$out/lib/" '/=> \// && index($3, dir) != 1 { print $1 }' |
            grep -Ev "$skip" || true)
  if [[ -n $missing ]]; then
    echo "pack.sh: $(basename "$bin") loads libraries from outside $out/lib: $missing" >&2
    exit 1
  fi
done
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
