#!/usr/bin/env bash
# On the GPU machine: the conformance suite on every target (each CUDA GPU, the CPU backend, host),
# each case in its own process, then the CPU backend and GPU side by side per test. Writes to $OUT;
# about 3 minutes on 16 cores. Run from the repository root:
#   OUT=/some/dir bash bench/device/conformance.sh
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
B=build/release
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 --target opkit_conformance_tests 2>&1 | tail -1
start=$(date +%s)
(cd $B && timeout 330 ctest -L conformance -j 12 --output-on-failure 2>&1) >"$OUT/conformance_ctest.txt"
echo "ctest exit $? in $(( $(date +%s) - start )) s"
grep -E "tests passed|Failed|Timeout|\*\*\*" "$OUT/conformance_ctest.txt" | tail -20
echo "== targets"
grep -A4 "EveryRequestedTargetIsPresent" "$OUT/conformance_ctest.txt" | grep -E "runs on|not run|OPKIT_TEST" | head -8
echo "== per target: passed / failed / skipped"
for t in cuda_0 cpu_0 cpu_serial_0 host; do
  p=$(grep -cE "/$t \.+ +Passed" "$OUT/conformance_ctest.txt"); f=$(grep -cE "/$t \.+\*+Failed" "$OUT/conformance_ctest.txt")
  s=$(grep -cE "/$t \.+\*+Skipped" "$OUT/conformance_ctest.txt"); echo "$t: $p passed, $f failed, $s skipped"
done
