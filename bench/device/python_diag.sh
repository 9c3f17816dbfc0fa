#!/usr/bin/env bash
# Issue 5 diagnosis on the GPU machine: installs the Python package, runs the step-by-step script
# for the crashing non-contiguous test with a native backtrace, then every pytest module in its own
# process (so one crash does not hide the modules after it). Writes to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}; mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
py=${PYTHON:-python3}
"$py" -c "import torch, nanobind, numpy; print('torch', torch.__version__, 'nanobind', nanobind.__version__, 'numpy', numpy.__version__)"
cc -shared -fPIC -O1 -o /tmp/segv_backtrace.so bench/device/segv_backtrace.c
CMAKE_BUILD_PARALLEL_LEVEL=16 "$py" -m pip install --no-build-isolation --no-deps --target /tmp/opkit-site \
  --config-settings=build-dir=build/python-gpu . >"$OUT/diag_pip.txt" 2>&1; echo "pip exit $?"
cp /tmp/opkit-site/opkit/_opkit*.so "$OUT/" 2>/dev/null
export PYTHONPATH=/tmp/opkit-site OPKIT_CACHE_DIR=$(mktemp -d)/cache
echo "== step by step: torch_noncontig.py"
SEGV_BACKTRACE=/tmp/segv_backtrace.so timeout 120 "$py" bench/device/torch_noncontig.py >"$OUT/diag_noncontig.txt" 2>&1
echo "exit $?"; grep -v "^[0-9a-f]*-[0-9a-f]* [r-][w-]-p\|^[0-9a-f]*-[0-9a-f]* ---p" "$OUT/diag_noncontig.txt" | head -60
echo "== pytest, one process per module"
# A pytest plugin that imports torch first, then puts the native crash handler back (torch replaces it).
cat >/tmp/segv_plugin.py <<'PY'
import ctypes, os
try:
    import torch  # noqa: F401
except ImportError:
    pass
ctypes.CDLL(os.environ["SEGV_BACKTRACE"]).segv_backtrace_install()
PY
for module in tests/python/test_*.py; do
  (cd tests/python && PYTHONPATH=/tmp/opkit-site:/tmp SEGV_BACKTRACE=/tmp/segv_backtrace.so timeout 200 \
    "$py" -m pytest -ra -q -p no:cacheprovider -p segv_plugin \
    "$(basename "$module")" >"$OUT/diag_$(basename "$module" .py).txt" 2>&1)
  echo "$(basename "$module"): exit $? — $(tail -1 "$OUT/diag_$(basename "$module" .py).txt")"
done
timeout 60 "$py" bench/python/bench_sha256_torch.py --rows 10000000 2>&1 | tail -8 | tee "$OUT/diag_torch_bench.txt"
