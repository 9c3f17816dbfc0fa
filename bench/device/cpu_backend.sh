#!/usr/bin/env bash
# On the GPU machine (H200, 16 cores): the CPU backend's tests (release; and the ASan build, where
# the out-of-bounds test runs), then SHA-256 of 64-byte messages on the CPU backend vs plain C++
# vs OpenSSL vs the GPU, with 1 worker thread and with all of them. Everything goes to $OUT.
# Run from the repository root:  OUT=/some/dir bash bench/device/cpu_backend.sh
# (CPU_BACKEND_ASAN=0 skips the ASan build, the longest part: about 4 minutes on 16 cores.)
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
B=build/release
log() { echo "== $*" | tee -a "$OUT/cpu_backend_summary.txt"; }

log "build (release)"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 2>&1 | tail -2
log "unit tests of the CPU backend (its own, doctor) and the conformance suite on it"
$B/tests/opkit_unit_tests --gtest_filter='CpuBackend*:Doctor*' --gtest_brief=1 >"$OUT/cpu_backend_unit.txt" 2>&1
OPKIT_TEST_DEVICES=cpu $B/tests/opkit_conformance_tests --gtest_brief=1 >>"$OUT/cpu_backend_unit.txt" 2>&1
tail -4 "$OUT/cpu_backend_unit.txt" | tee -a "$OUT/cpu_backend_summary.txt"
$B/tools/opkit/opkit doctor 2>&1 | grep -E "cpu|ready" | tee -a "$OUT/cpu_backend_summary.txt"

log "SHA-256, 64-byte messages: 1 worker thread"
OPKIT_CPU_THREADS=1 $B/bench/opkit_cpu_backend_bench 2>&1 | tee "$OUT/cpu_backend_bench_1.txt" |
  tee -a "$OUT/cpu_backend_summary.txt"
log "SHA-256, 64-byte messages: all hardware threads"
$B/bench/opkit_cpu_backend_bench 2>&1 | tee "$OUT/cpu_backend_bench_all.txt" | tee -a "$OUT/cpu_backend_summary.txt"

[ "${CPU_BACKEND_ASAN:-1}" = 0 ] && exit 0
log "ASan + UBSan build: CPU backend tests (kernels of the out-of-bounds test built with -fsanitize=address)"
cmake --preset asan -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset asan -j 16 --target opkit_unit_tests opkit_conformance_tests 2>&1 | tail -2
ASAN_OPTIONS=detect_leaks=1 ./build/asan/tests/opkit_unit_tests --gtest_filter='CpuBackend*' --gtest_brief=1 \
  >"$OUT/cpu_backend_asan.txt" 2>&1
ASAN_OPTIONS=detect_leaks=1 OPKIT_TEST_DEVICES=cpu ./build/asan/tests/opkit_conformance_tests \
  --gtest_filter='On/KernelSemantics.*:On/Intrinsics.*:On/Core.*' --gtest_brief=1 >>"$OUT/cpu_backend_asan.txt" 2>&1
tail -6 "$OUT/cpu_backend_asan.txt" | tee -a "$OUT/cpu_backend_summary.txt"
