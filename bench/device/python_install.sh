# Sourced by bench/device/python.sh and torch.sh: installs the opkit Python package for the GPU
# machine's python (${PYTHON:-python3}) and sets $py to the interpreter that sees it.
# usage: opkit_python_install BUILD_DIR LOG   (returns non-zero when the install failed)
opkit_python_install() {
  local build_dir=$1 log=$2 python=${PYTHON:-python3} venv=/tmp/opkit-python-venv
  local pip_target=()
  # A venv made from a python that is itself a venv's (the GPU machine's /opt/torch/.venv) does
  # not see that venv's packages (nanobind, scikit-build-core, torch); install beside it instead.
  if "$python" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
    echo "$python runs in a virtual environment: installing into /tmp/opkit-site (PYTHONPATH)"
    py="$python"
    pip_target=(--target /tmp/opkit-site --upgrade)
    export PYTHONPATH=/tmp/opkit-site${PYTHONPATH:+:$PYTHONPATH}
  elif "$python" -m venv --system-site-packages "$venv" 2>"$log.venv_error"; then
    py="$venv/bin/python"
  else
    echo "no venv ($(tail -1 "$log.venv_error")); installing with --user --break-system-packages"
    py="$python"
    export PIP_USER=1 PIP_BREAK_SYSTEM_PACKAGES=1
  fi
  if ! "$py" -c "import pytest" 2>/dev/null && [ -d build/wheels ]; then
    "$py" -m pip install --no-index --find-links build/wheels pytest 2>&1 | tail -1
  fi
  echo "== pip install --no-build-isolation --no-deps ."
  local start status
  start=$(date +%s)
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$py" -m pip install --no-build-isolation --no-deps "${pip_target[@]}" \
    --config-settings=build-dir="$build_dir" . >"$log" 2>&1
  status=$?
  tail -3 "$log"
  echo "install exit $status after $(($(date +%s) - start)) s"
  return $status
}
