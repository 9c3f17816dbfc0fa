#!/usr/bin/env bash
# Builds and installs the Python package into a virtual environment (build/python-venv, which also
# sees the system's site-packages, e.g. PyTorch and CuPy where present) and runs its pytest suite.
# Exits non-zero on any failure, and when pytest collected no test.
# The torch tests (test_torch_ops.py: opkit.torch's ops, opcheck, torch.compile, CUDA graphs) run
# when the venv's python imports torch and skip, saying so, where it does not (CI). To run them
# here, point OPKIT_PYTHON_VENV at a venv that has torch (docs/torch.md, "Tests and benchmark").
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
