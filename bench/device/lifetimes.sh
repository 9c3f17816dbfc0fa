#!/usr/bin/env bash
# On the GPU machine: what the lifetime and race fixes (issue 15 items 4 and 9) change where a GPU
# is present. The GPU tests (module reuse, mining with background compiles, shared-memory opt-in)
# and the unit tests in the release build and under ASan + LSan, whose exit now unloads cached
# CUDA modules and joins the compile queue; then processes that exit while a data-mode compile
# may still run (normal exit and SIGINT), which must end with their documented status and no
# crash. Everything goes to $OUT; a table is printed last. About 4 minutes on 16 cores.
# Run from the repository root:  OUT=/some/dir bash bench/device/lifetimes.sh
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
B=build/release
export OPKIT_CACHE_DIR="$OUT/kernel-cache"  # cold cache: compiles really run at exit
summary="$OUT/lifetimes_summary.txt"
: >"$summary"
row() { printf '%-58s %s\n' "$1" "$2" | tee -a "$summary"; }

cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 >"$OUT/build.txt" 2>&1
$B/tests/opkit_gpu_tests --gtest_brief=1 >"$OUT/gpu_tests.txt" 2>&1
row "gpu tests (release)" "rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/gpu_tests.txt" | tr '\n' ' ')"
$B/tests/opkit_unit_tests --gtest_filter='ModuleCache*:CompileQueue*:CacheEntry*' \
  --gtest_brief=1 >"$OUT/unit_tests.txt" 2>&1
row "lifetime unit tests (release)" "rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/unit_tests.txt" | tr '\n' ' ')"

# A data-mode search that finds quickly, so the next digit count's kernel may still compile at exit.
for run in 1 2 3; do
  rm -rf "$OPKIT_CACHE_DIR"
  $B/tools/opkit/opkit mine --data "lifetimes-$run" --difficulty 8 --device cuda >"$OUT/mine_exit_$run.txt" 2>&1
  row "mine, exit with a compile in flight (run $run)" "rc=$? (0 expected)"
done
rm -rf "$OPKIT_CACHE_DIR"
timeout -s INT 3 $B/tools/opkit/opkit mine --data lifetimes-int --difficulty 60 --device cuda >"$OUT/mine_sigint.txt" 2>&1
row "mine, SIGINT after 3 s" "rc=$? (130 expected)"

cmake --preset asan >/dev/null && cmake --build --preset asan -j 16 --target opkit_unit_tests opkit_gpu_tests \
  >"$OUT/build_asan.txt" 2>&1
ASAN_OPTIONS=detect_leaks=1 ./build/asan/tests/opkit_gpu_tests --gtest_brief=1 >"$OUT/gpu_tests_asan.txt" 2>&1
row "gpu tests (ASan + LSan; CUDA modules unloaded at exit)" \
  "rc=$? $(grep -E '^\[  (PASSED|FAILED)|ERROR: (Address|Leak)' "$OUT/gpu_tests_asan.txt" | tr '\n' ' ')"
echo
cat "$summary"
