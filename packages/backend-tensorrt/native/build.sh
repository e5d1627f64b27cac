#!/usr/bin/env bash
# Builds libtritium_trt.so (the TensorRT shim, trt_shim.cpp) against TensorRT 10 and CUDA.
#
#   packages/backend-tensorrt/native/build.sh [--require]
#
# Finds TensorRT through $TENSORRT_HOME (include/, lib/), then the Debian/Ubuntu package paths
# (/usr/include/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu); CUDA through $CUDA_HOME, then
# /usr/local/cuda. Output: native/build/libtritium_trt.so (or $TRT_SHIM_OUT), with an rpath to the
# library folders it linked against. Where TensorRT or CUDA is missing it prints what is missing and
# exits 0 (skipped), or 1 with --require. $CXX overrides the compiler (default g++).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${TRT_SHIM_OUT:-$here/build/libtritium_trt.so}"
require=0
[[ "${1:-}" == "--require" ]] && require=1
arch="$(uname -m)-linux-gnu"

skip() {
  echo "trt shim: SKIPPED: $1" >&2
  echo "trt shim: install TensorRT 10 and CUDA, set TENSORRT_HOME (and CUDA_HOME if not /usr/local/cuda), and run this script again." >&2
  exit "$require"
}

first_dir_with() { # first_dir_with <file> <dir>...
  local file="$1"; shift
  for d in "$@"; do
    [[ -n "$d" && -e "$d/$file" ]] && { echo "$d"; return 0; }
  done
  return 1
}

trt_inc="$(first_dir_with NvInfer.h ${TENSORRT_HOME:+"$TENSORRT_HOME/include"} "/usr/include/$arch" /usr/include /usr/local/include)" ||
  skip "NvInfer.h (TensorRT headers) not found in \$TENSORRT_HOME/include, /usr/include/$arch or /usr/include"
trt_lib="$(first_dir_with libnvinfer.so.10 ${TENSORRT_HOME:+"$TENSORRT_HOME/lib"} ${TENSORRT_HOME:+"$TENSORRT_HOME/lib64"} "/usr/lib/$arch" /usr/lib /usr/local/lib)" ||
  skip "libnvinfer.so.10 (TensorRT 10 runtime) not found in \$TENSORRT_HOME/lib or /usr/lib/$arch"

cuda_home="${CUDA_HOME:-/usr/local/cuda}"
cuda_inc="$(first_dir_with cuda_runtime_api.h "$cuda_home/include" "$cuda_home/targets/$(uname -m)-linux/include" /usr/include)" ||
  skip "cuda_runtime_api.h (CUDA headers) not found under \$CUDA_HOME ($cuda_home)"
cuda_lib="$(first_dir_with libcudart.so "$cuda_home/lib64" "$cuda_home/lib" "$cuda_home/targets/$(uname -m)-linux/lib" "/usr/lib/$arch")" ||
  skip "libcudart.so (CUDA runtime) not found under \$CUDA_HOME ($cuda_home)"

version="$(grep -E '#define NV_TENSORRT_MAJOR' "$trt_inc/NvInferVersion.h" 2>/dev/null | awk '{print $3}' || true)"
if [[ -n "$version" && "$version" != "10" ]]; then
  skip "TensorRT headers in $trt_inc are version $version; the shim needs TensorRT 10"
fi

mkdir -p "$(dirname "$out")"
echo "trt shim: TensorRT headers $trt_inc, library $trt_lib; CUDA headers $cuda_inc, library $cuda_lib"
"${CXX:-g++}" -std=c++17 -O2 -Wall -Wextra -shared -fPIC \
  -I"$here" -I"$trt_inc" -I"$cuda_inc" \
  "$here/trt_shim.cpp" \
  -L"$trt_lib" -L"$cuda_lib" -l:libnvinfer.so.10 -lcudart \
  -Wl,-rpath,"$trt_lib" -Wl,-rpath,"$cuda_lib" \
  -o "$out"
echo "trt shim: built $out"
