#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages opkit needs to build and test (when run as root), or prints
# the exact command to run (otherwise); `--test` also the tools of the extra checks (below).
# Nothing CUDA-related is a build dependency: the driver and NVRTC are found at run time.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config liblz4-dev libxxhash-dev lz4
  libssl-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  python3 python3-dev python3-venv python3-pip
)
# What the test command's extra checks use: clang/libFuzzer (scripts/fuzz.sh), clang-tidy
# (scripts/clang_tidy.sh), valgrind (the CPU backend's valgrind case). Installed where possible;
# without them those steps say so and skip, so a failure here does not stop the build.
# Only `scripts/deps.sh --test` (what scripts/test.sh runs) asks for them.
optional=()
[ "${1:-}" = --test ] && optional=(clang clang-tidy libclang-rt-dev valgrind)

# The packages among the arguments that dpkg does not have installed, one per line.
not_installed() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(not_installed "${packages[@]}")
mapfile -t missing_optional < <(not_installed ${optional[@]+"${optional[@]}"})
[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    echo "opkit: installing ${missing[*]}" >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [ ${#missing_optional[@]} -gt 0 ]; then
    echo "opkit: installing ${missing_optional[*]} (fuzzing, clang-tidy, valgrind checks)" >&2
    [ ${#missing[@]} -gt 0 ] || apt-get update -qq || true
    apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" >/dev/null ||
      echo "opkit: could not install ${missing_optional[*]}; the checks that need them will skip" >&2
  fi
elif [ ${#missing[@]} -eq 0 ]; then
  echo "opkit: optional packages missing (their checks will skip): sudo apt-get install -y ${missing_optional[*]}" >&2
else
  echo "opkit: missing packages; run:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
