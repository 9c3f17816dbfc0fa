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
venv=/tmp/opkit-python-venv

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

# A venv made from a python that is itself a venv's (the GPU machine's /opt/torch/.venv) does not
# see that venv's packages (nanobind, scikit-build-core, torch); install beside it instead.
pip_target=()
if "$python" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
  echo "$python runs in a virtual environment: installing into /tmp/opkit-site (PYTHONPATH)"
  py="$python"
  pip_target=(--target /tmp/opkit-site)
  export PYTHONPATH=/tmp/opkit-site${PYTHONPATH:+:$PYTHONPATH}
elif "$python" -m venv --system-site-packages "$venv" 2>"$OUT/venv_error.txt"; then
  py="$venv/bin/python"
else
  echo "no venv ($(tail -1 "$OUT/venv_error.txt")); installing with --user --break-system-packages"
  py="$python"
  export PIP_USER=1 PIP_BREAK_SYSTEM_PACKAGES=1
fi

if ! "$py" -c "import pytest" 2>/dev/null && [ -d build/wheels ]; then
  "$py" -m pip install --no-index --find-links build/wheels pytest 2>&1 | tail -1
fi

echo "== pip install --no-build-isolation --no-deps ."
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$py" -m pip install --no-build-isolation --no-deps "${pip_target[@]}" \
  --config-settings=build-dir=build/python-gpu . >"$OUT/python_install.txt" 2>&1
status=$?
tail -3 "$OUT/python_install.txt"
echo "install exit $status after $(( $(date +%s) - start )) s"
[ "$status" -eq 0 ] || exit 1

echo "== pytest tests/python"
if "$py" -c "import pytest" 2>/dev/null; then
  (cd tests/python && "$py" -m pytest -ra -p no:cacheprovider --durations=8 . 2>&1) | tee "$OUT/python_tests.txt" | tail -45
else
  echo "pytest is missing and build/wheels was not carried: tests not run" | tee "$OUT/python_tests.txt"
fi

echo "== bench/python/bench_sha256_torch.py"
"$py" bench/python/bench_sha256_torch.py --rows 10000000 --json "$OUT/bench_sha256_torch.json" 2>&1 |
  tee "$OUT/bench_sha256_torch.txt"
