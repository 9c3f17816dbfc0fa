#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages opkit needs to build and test (when run as root), or prints
# the exact command to run (otherwise). Nothing CUDA-related is a build dependency: the driver
# and NVRTC are found at run time.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config liblz4-dev libxxhash-dev lz4
  libssl-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  python3 python3-dev python3-venv python3-pip
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "opkit: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "opkit: missing packages; run:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
