#!/usr/bin/env bash
# Builds and installs the Python package into a virtual environment (build/python-venv, which also
# sees the system's site-packages, e.g. PyTorch and CuPy where present) and runs its pytest suite.
# Exits non-zero on any failure, and when pytest collected no test.
# The torch tests (test_torch_ops.py, test_torch_cipher_lz4_ops.py: opkit.torch's ops, opcheck,
# torch.compile, CUDA graphs on a GPU) need PyTorch: where the venv lacks it, PyTorch's CPU build is
# installed into it (about 200 MB once; the tests then take about half a minute on two cores), so
# that CI runs them on CPU tensors. OPKIT_NO_TORCH=1 skips that install; offline, the tests skip,
# saying so. OPKIT_PYTHON_VENV points at another venv (one with a CUDA torch, docs/torch.md).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
venv=${OPKIT_PYTHON_VENV:-build/python-venv}
jobs=$(nproc)

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv --system-site-packages "$venv"
fi
py="$(cd "$venv" && pwd)/bin/python"  # absolute: the tests run from tests/python

# Build requirements and test tools: fetched only when missing, so an offline machine that has
# them installed works too.
need=()
for module in nanobind scikit_build_core pytest numpy; do
  "$py" -c "import $module" 2>/dev/null || need+=("${module//_/-}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "opkit: installing ${need[*]} into $venv" >&2
  "$py" -m pip install --quiet "${need[@]}"
fi

if [ "${OPKIT_NO_TORCH:-0}" != 1 ] && ! "$py" -c "import torch" 2>/dev/null; then
  echo "opkit: installing PyTorch (CPU build) into $venv for the opkit.torch tests" >&2
  "$py" -m pip install --quiet --timeout 20 --retries 1 --index-url https://download.pytorch.org/whl/cpu torch ||
    echo "opkit: could not install PyTorch; the opkit.torch tests will skip" >&2
fi

# The build directory is kept between runs, so that a rebuild compiles only what changed.
CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$py" -m pip install --quiet --no-build-isolation --no-deps \
  --config-settings=build-dir=build/python/{wheel_tag} .

status=0
(cd tests/python && "$py" -m pytest -ra -q -p no:cacheprovider .) || status=$?
if [ "$status" -eq 5 ]; then
  echo "opkit: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
