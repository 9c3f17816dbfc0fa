#!/usr/bin/env bash
# Short GPU-machine check after a fix: every GPU test in its own process (ctest), `opkit mine` in
# data mode (exit codes: a crash at exit shows as 134/139), and the Python package's first CUDA
# compile with a native backtrace on a crash (bench/device/segv_backtrace.c). Writes to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
# VERIFY_NATIVE=0 skips the native part (build, GPU tests, opkit mine) and checks Python only.
if [ "${VERIFY_NATIVE:-1}" != 0 ]; then
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 2>&1 | tail -1
echo "== GPU and conformance tests (ctest -L 'gpu|conformance')"
(cd $B && timeout "${VERIFY_CTEST_SECONDS:-240}" ctest -L 'gpu|conformance' -j 6 --output-on-failure 2>&1) >"$OUT/verify_ctest.txt"
grep -E "tests passed|FAILED|Failed|Timeout|\*\*\*" "$OUT/verify_ctest.txt" | tail -15
echo "== opkit mine --data on the GPU (new jobs)"
for text in "verify $(date +%s%N)" "verify $(date +%s%N) b"; do
  $B/tools/opkit/opkit mine --device cuda --quiet --json --data "$text" --difficulty 30 >"$OUT/verify_mine.json"
  echo "exit $?: $(cut -c1-160 "$OUT/verify_mine.json")"
done
fi
echo "== Python: install, first CUDA compile with a native backtrace on a crash"
cc -shared -fPIC -O1 -o /tmp/segv_backtrace.so bench/device/segv_backtrace.c
py=${PYTHON:-python3}
CMAKE_BUILD_PARALLEL_LEVEL=16 "$py" -m pip install --no-build-isolation --no-deps --target /tmp/opkit-site \
  --config-settings=build-dir=build/python-gpu . >"$OUT/verify_pip.txt" 2>&1; echo "pip exit $?"
export PYTHONPATH=/tmp/opkit-site OPKIT_CACHE_DIR=$(mktemp -d)/cache
cat >/tmp/opkit_first_compile.py <<'PY'
import numpy as np, hashlib, opkit
x = np.random.default_rng(1).integers(0, 256, (5000, 77), dtype=np.uint8)
out = opkit.sha256(x, device="cuda")
ref = np.frombuffer(b"".join(hashlib.sha256(bytes(r)).digest() for r in x), np.uint8).reshape(-1, 32)
print("equal:", bool((np.asarray(out) == ref).all()), flush=True)
PY
LD_PRELOAD=/tmp/segv_backtrace.so "$py" /tmp/opkit_first_compile.py >"$OUT/verify_python_crash.txt" 2>&1
echo "python exit $?"; grep -v "^[0-9a-f]*-[0-9a-f]* [r-][w-]-p\|^[0-9a-f]*-[0-9a-f]* ---p" "$OUT/verify_python_crash.txt" | head -40
cp /tmp/opkit-site/opkit/_opkit*.so "$OUT/" 2>/dev/null
if grep -q "equal: True" "$OUT/verify_python_crash.txt"; then
  echo "== pytest tests/python"
  (cd tests/python && timeout 150 "$py" -m pytest -ra -q -p no:cacheprovider . 2>&1 | tail -25) | tee "$OUT/verify_pytest.txt"
  timeout 60 "$py" bench/python/bench_sha256_torch.py --rows 10000000 2>&1 | tail -8 | tee "$OUT/verify_torch_bench.txt"
fi
