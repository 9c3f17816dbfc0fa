#!/usr/bin/env bash
# Builds opkit and runs every test: unit and NVRTC tests, GPU tests (they skip without a GPU,
# saying why), CLI end-to-end tests, the Python package's tests, clang-tidy (scripts/clang_tidy.sh),
# the libFuzzer targets (scripts/fuzz.sh),
# and the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer (with the CPU
# backend's conformance semantics).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh --test
jobs=$(nproc)

echo "== Release build and tests =="
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

if [ -f scripts/python_test.sh ]; then
  echo "== Python package tests =="
  bash scripts/python_test.sh
fi

echo "== clang-tidy =="
bash scripts/clang_tidy.sh  # says so and passes where clang-tidy is not installed

echo "== Fuzz targets (tests/fuzz, about 30 s each) =="
bash scripts/fuzz.sh  # says so and passes where clang++ is not installed

if [ "${OPKIT_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== ASan/UBSan build, unit tests =="
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs" --target opkit_unit_tests opkit_conformance_tests
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ./build/asan/tests/opkit_unit_tests
  # The CPU backend's runtime (fibers, barriers, shared memory, atomics) under the sanitizers.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 OPKIT_TEST_DEVICES=cpu \
    ./build/asan/tests/opkit_conformance_tests --gtest_filter='On/KernelSemantics.*:On/Intrinsics.*:On/Core.*'
fi
