#!/usr/bin/env bash
# Builds opkit (Release) and runs the main demo: the PyCUDA tutorial in opkit's C++ API, then
# mining a real Bitcoin block (block 1) on the best device there is (GPU, else the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
echo
echo "== The PyCUDA tutorial, in C++ (examples/tutorial.cpp) =="
./build/release/examples/opkit_tutorial
if ./build/release/tools/opkit/opkit mine --help >/dev/null 2>&1; then
  echo
  echo "== Mining Bitcoin block 1 (2^20 nonces ending at its real nonce) =="
  header=010000006fe28c0ab6f1b372c1a6a246ae63f74f931e8365e15a089c68d6190000000000982051fd1e4ba744bbbe680e1fee14677ba1a3c3540bf7b1cdb606e857233e0e61bc6649ffff001d01e36299
  ./build/release/tools/opkit/opkit mine --header "$header" --start $((0x9962e301 - (1 << 20) + 1)) --count $((1 << 20))
fi
