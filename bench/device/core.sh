#!/usr/bin/env bash
# On the GPU machine: build, run the unit + GPU tests of the core, the tutorial, and the launch
# benchmark. Writes logs to $OUT. Run from the repository root (or a snapshot of it).
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 2>&1 | tail -3
./build/release/tests/opkit_unit_tests --gtest_brief=1 2>&1 | tail -5 | tee "$OUT/core_unit.txt"
( cd build/release && ctest -L gpu -j 8 --output-on-failure 2>&1 | tail -25 ) | tee "$OUT/core_gpu.txt"
./build/release/examples/opkit_tutorial 2>&1 | tail -4
./build/release/bench/opkit_launch_bench 2>&1 | tee "$OUT/launch_bench.txt"
