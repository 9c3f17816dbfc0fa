#!/usr/bin/env bash
# On the GPU machine (offline, Python 3.12 with torch, cupy, nanobind, scikit-build-core): install
# the Python package with pip into a venv that sees the system's packages, run its pytest suite
# (GPU tests included), then the torch SHA-256 benchmark. Logs and JSON go to $OUT.
# pytest, if the machine lacks it, comes from wheels carried in build/wheels (see docs/python.md).
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
python=${PYTHON:-python3}

"$python" - <<'PY' 2>&1 | tee "$OUT/python_env.txt"
import importlib, os, sys, sysconfig
print("python", sys.version.split()[0], sys.executable)
include = sysconfig.get_paths()["include"]
print("Python.h", "found in" if os.path.exists(os.path.join(include, "Python.h")) else "MISSING from", include)
for name in ("numpy", "torch", "cupy", "nanobind", "scikit_build_core", "pytest"):
    try:
        print(name, getattr(importlib.import_module(name), "__version__", "?"))
    except Exception as error:
        print(name, "MISSING:", type(error).__name__, error)
PY

source bench/device/python_install.sh
opkit_python_install build/python-gpu "$OUT/python_install.txt" || exit 1

echo "== pytest tests/python"
if "$py" -c "import pytest" 2>/dev/null; then
  (cd tests/python && "$py" -m pytest -ra -p no:cacheprovider --durations=8 . 2>&1) | tee "$OUT/python_tests.txt" | tail -45
else
  echo "pytest is missing and build/wheels was not carried: tests not run" | tee "$OUT/python_tests.txt"
fi

echo "== bench/python/bench_sha256_torch.py"
"$py" bench/python/bench_sha256_torch.py --rows 10000000 --json "$OUT/bench_sha256_torch.json" 2>&1 |
  tee "$OUT/bench_sha256_torch.txt"
