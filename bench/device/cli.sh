#!/usr/bin/env bash
# On the GPU machine: opkit doctor, opkit devices, the README `opkit run` example on the GPU, the
# kernel-cache GPU tests, the CLI end-to-end tests (doctor, devices, compile, run: they exercise
# the GPU when one is present), and the kernel-cache benchmark. Run from the repository root;
# results go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null &&
  cmake --build --preset release -j 16 --target opkit_cli opkit_unit_tests opkit_gpu_tests opkit_cache_bench 2>&1 | tail -3
OPKIT=build/release/tools/opkit/opkit
export OPKIT_CACHE_DIR=$(mktemp -d)/cache  # a cold, private cache for what follows

echo "== opkit doctor"
"$OPKIT" doctor >"$OUT/doctor.txt" 2>&1
echo "exit: $?" >>"$OUT/doctor.txt"
cat "$OUT/doctor.txt"
"$OPKIT" doctor --require-gpu --json >"$OUT/doctor.json" 2>&1
echo "doctor --require-gpu exit: $?" | tee -a "$OUT/doctor.txt"

echo "== opkit devices"
"$OPKIT" devices 2>&1 | tee "$OUT/devices.txt"
"$OPKIT" devices --json >"$OUT/devices.json" 2>&1

echo "== opkit run (README example) on the GPU"
cat >"$OUT/tutorial.cu" <<'EOF'
__global__ void test_kernel(float *a) {
  int idx = threadIdx.x + threadIdx.y * 4;
  a[idx] = 2.0 * idx;
}
EOF
"$OPKIT" run "$OUT/tutorial.cu" --kernel test_kernel --block 256 --arg out:f32:256 --device cuda 2>&1 |
  tee "$OUT/run_tutorial.txt"
expected=$(seq 0 2 510 | tr '\n' ' ' | sed 's/ $//')
[ "$(cat "$OUT/run_tutorial.txt")" == "$expected" ] && echo "run: matches 0 2 4 ... 510" || echo "run: MISMATCH"
"$OPKIT" run "$OUT/tutorial.cu" --kernel test_kernel --block 2048 --arg out:f32:2048 --device cuda >/dev/null 2>"$OUT/run_error.txt"
echo "run with --block 2048 exit: $? (expected 3); $(head -1 "$OUT/run_error.txt")"

echo "== tests"
(cd build/release && ctest -R 'cli\.test_(doctor|devices|compile|run)|Cache|Doctor' --output-on-failure 2>&1 | tail -25) |
  tee "$OUT/cli_tests.txt"
./build/release/tests/opkit_gpu_tests --gtest_filter='CacheGpu.*' 2>&1 | tail -8 | tee "$OUT/cache_gpu_tests.txt"

echo "== cache benchmark"
./build/release/bench/opkit_cache_bench 2>&1 | tee "$OUT/cache_bench.txt"
