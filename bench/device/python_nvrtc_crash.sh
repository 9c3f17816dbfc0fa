#!/usr/bin/env bash
# Issue 5 diagnosis on the GPU machine: does the first NVRTC compile in a Python process that has
# torch and/or CuPy imported crash (run6: sha256 of a CuPy (2000, 77) array, the first kernel not
# in the disk cache, segfaulted)? Each case runs in a fresh process on a cold private cache and
# prints which libnvrtc/builtins files the process has mapped, then a native backtrace via gdb if any.
# Needs the package installed as bench/device/python.sh does (/tmp/opkit-site). Writes to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH PYTHONPATH=/tmp/opkit-site${PYTHONPATH:+:$PYTHONPATH}
py=${PYTHON:-python3}
for imports in "" "torch" "cupy" "torch,cupy" "cupy,torch"; do
  export OPKIT_CACHE_DIR=$(mktemp -d)/cache  # cold: forces an NVRTC compile
  echo "== imports before opkit's first compile: [${imports:-none}]"
  cat >/tmp/opkit_nvrtc_case.py <<PY
import faulthandler, sys; faulthandler.enable()
for name in "$imports".split(","):
    if name: __import__(name)
import numpy as np, hashlib, opkit
def mapped():
    return sorted({l.split()[-1] for l in open("/proc/self/maps") if "nvrtc" in l})
print("before compile:", mapped(), flush=True)
x = np.random.default_rng(1).integers(0, 256, (5000, 77), dtype=np.uint8)
out = opkit.sha256(x, device="cuda")  # host data hashed on the GPU: compiles L=77, LOAD_ALIGN=1
ref = np.frombuffer(b"".join(hashlib.sha256(bytes(r)).digest() for r in x), np.uint8).reshape(-1, 32)
print("after compile:", mapped(), "equal:", bool((np.asarray(out) == ref).all()), flush=True)
PY
  "$py" /tmp/opkit_nvrtc_case.py 2>&1 | tail -25; status=${PIPESTATUS[0]}
  echo "exit $status"
  if [ "$status" -ne 0 ] && command -v gdb >/dev/null; then
    timeout 120 gdb -q -batch -iex "set debuginfod enabled off" -ex run -ex bt -ex "info sharedlibrary nvrtc" --args "$py" /tmp/opkit_nvrtc_case.py </dev/null 2>&1 | tail -40
  fi
done 2>&1 | tee "$OUT/python_nvrtc_crash.txt"
echo "== the failing test alone, cold cache"
export OPKIT_CACHE_DIR=$(mktemp -d)/cache
(cd tests/python && "$py" -X faulthandler -m pytest -q -p no:cacheprovider test_gpu_cupy.py -k "77" 2>&1 | tail -30) |
  tee "$OUT/python_cupy_77_cold.txt"
if ! grep -q " passed" "$OUT/python_cupy_77_cold.txt" && command -v gdb >/dev/null; then
  echo "== the failing test under gdb (native backtrace of every thread)"
  export OPKIT_CACHE_DIR=$(mktemp -d)/cache
  (cd tests/python && timeout 120 gdb -q -batch -iex "set debuginfod enabled off" -ex run -ex bt -ex "thread apply all bt 12" -ex "info sharedlibrary" \
    --args "$py" -m pytest -q -p no:cacheprovider test_gpu_cupy.py -k "77" </dev/null 2>&1 | tail -150) |
    tee "$OUT/python_cupy_77_gdb.txt"
fi
