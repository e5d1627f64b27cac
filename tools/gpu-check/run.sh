#!/usr/bin/env bash
# gpu-check: verifies the TensorRT backend on a machine with an NVIDIA GPU, TensorRT 10 and CUDA.
#
#   tools/gpu-check/run.sh            # the real check (needs GPU + TensorRT 10 + CUDA)
#   tools/gpu-check/run.sh --double   # DRY RUN of the script's plumbing with the test double (no GPU; verifies nothing about TensorRT)
#
# Steps (each prints [PASS]/[FAIL]; the script stops at the first failure):
#   1. GPU        nvidia-smi sees a GPU
#   2. shim       packages/backend-tensorrt/native/build.sh --require builds libtritium_trt.so
#   3. onnx       @tritium/onnx-gen writes Triton's `simple` add/sub (FP32, [batch,16])
#   4. engine     trtexec (or build_engine.py with the TensorRT Python API) builds model.plan, batch 1/4/8
#   5. serve      src/serve-and-infer.ts (compiled first: `npx tsc -b tools/gpu-check`) serves it through Tritium over HTTP and infers (single, batched,
#                 out-of-profile), printing each result
# Env: TENSORRT_HOME, CUDA_HOME (shim build), TRTEXEC (path to trtexec), GPU_CHECK_DIR (work folder; default a temp dir).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${GPU_CHECK_DIR:-$(mktemp -d -t tritium-gpu-check-XXXXXX)}"
mkdir -p "$work"
mode="${1:-real}"

step() { # step <name> <command...>
  local name="$1"; shift
  local log="$work/$name.log"
  if "$@" >"$log" 2>&1; then
    echo "[PASS] $name: $(tail -n 3 "$log" | tr '\n' ' ')"
  else
    echo "[FAIL] $name (exit $?):"; sed 's/^/    /' "$log"
    echo "gpu-check: FAILED at step '$name' (logs in $work)"
    exit 1
  fi
}

cd "$root"
echo "gpu-check: work folder $work; $(date -u +%FT%TZ); $(uname -srm); node $(node --version)"

step build npx tsc -b tools/gpu-check   # compiled JavaScript (dist/) for the steps below

if [[ "$mode" == "--double" ]]; then
  echo "gpu-check: DRY RUN with the TEST DOUBLE (host memory): checks this script's plumbing only, NOT TensorRT or a GPU"
  step shim-double cc -shared -fPIC -O1 -o "$work/libtritium_trt.so" packages/backend-tensorrt/test/double/trt_double.c
  step engine-double bash -c "printf 'TRITIUM-TRT-DOUBLE 1\nprofiles 1\ninput INPUT0 0 -1,16 1,16/4,16/8,16\ninput INPUT1 0 -1,16 1,16/4,16/8,16\noutput OUTPUT0 0 -1,16\noutput OUTPUT1 0 -1,16\nop addsub\n' > '$work/model.plan' && echo 'double engine written'"
else
  step gpu nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  step shim env TRT_SHIM_OUT="$work/libtritium_trt.so" packages/backend-tensorrt/native/build.sh --require
  step onnx node tools/gpu-check/dist/gen-onnx.js "$work/model.onnx"
  trtexec="${TRTEXEC:-$(command -v trtexec || true)}"
  [[ -z "$trtexec" && -n "${TENSORRT_HOME:-}" && -x "$TENSORRT_HOME/bin/trtexec" ]] && trtexec="$TENSORRT_HOME/bin/trtexec"
  if [[ -n "$trtexec" ]]; then
    step engine "$trtexec" --onnx="$work/model.onnx" --saveEngine="$work/model.plan" \
      --minShapes=INPUT0:1x16,INPUT1:1x16 --optShapes=INPUT0:4x16,INPUT1:4x16 --maxShapes=INPUT0:8x16,INPUT1:8x16
  else
    step engine python3 tools/gpu-check/build_engine.py "$work/model.onnx" "$work/model.plan"
  fi
fi

echo "gpu-check: step serve (each check below)"
if TRITIUM_TRT_SHIM="$work/libtritium_trt.so" node tools/gpu-check/dist/serve-and-infer.js "$work"; then
  echo "gpu-check: ALL PASSED ($mode)"
else
  echo "gpu-check: FAILED at step 'serve' (work folder $work)"
  exit 1
fi
