#!/usr/bin/env bash
# On the GPU machine: compute-sanitizer over every operator kernel (SHA-256 fixed and variable
# length, sha256d, Bitcoin and data-mode mining with its candidate buffer, AES-CTR/GCM,
# ChaCha20(-Poly1305), LZ4 compress and decompress) through the conformance suite on cuda:0, plus
# the core and kernel-semantics cases, and the CLI's GPU paths with compute-sanitizer's defaults.
#   memcheck  : every operator, Core, KernelSemantics on cuda_0
#   racecheck, synccheck, initcheck : every operator and the shared-memory KernelSemantics cases
#   CLI (memcheck, API errors reported): hash --lines, mine --data, mine --header, mine --device
#     all, mine --job (real block 100000), mine --pool (the test pool, 3 shares checked by it),
#     doctor (its smoke kernel), run, encrypt/decrypt, lz4
# The suite runs with --report-api-errors no because some cases provoke API errors on purpose
# (an unknown kernel name); the CLI runs keep the default, so an API error of opkit's own (the old
# cuFuncGetParamInfo probe past the last parameter) counts. The four tools run at once (the
# GPU and 16 cores have room); about 4 minutes with the build. Exit 0 only when every run
# finished, every test passed and every error count is 0. Run from the repository root:
#   OUT=/some/dir bash bench/device/sanitize.sh
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
if ! command -v compute-sanitizer >/dev/null; then
  echo "compute-sanitizer not found (PATH=$PATH)"
  exit 3
fi
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null &&
  cmake --build --preset release -j 16 --target opkit_conformance_tests opkit_cli 2>&1 | tail -1 || exit 3

# One process per tool and group, all at once: a whole-suite run under racecheck or initcheck takes
# longer than a device call allows (LZ4 round trips alone take minutes), a group at most ~4 minutes.
declare -A group=(
  [sha256]='On/Sha256.*/cuda_0'
  [mine]='On/Mine.*/cuda_0:On/MineCandidates.*/cuda_0'
  [ciphers]='On/Ciphers.*/cuda_0'
  [lz4frames]='On/Lz4.FramesItWritesDecodeWithLiblz4/cuda_0'
  [lz4decode]='On/Lz4.DecodesEveryFrameLiblz4Writes/cuda_0'
  [lz4legacy]='On/Lz4.DecodesLegacyConcatenatedAndSkippableFrames/cuda_0'
  [lz4device]='On/Lz4.DeviceBuffersInAndOut/cuda_0:On/Lz4.DeviceBatchesGiveOneFramePerBuffer/cuda_0'
  [lz4hostile]='On/Lz4.TruncatedFramesAreErrors/cuda_0:On/Lz4.MutatedFramesFailCleanlyOrAgreeWithLiblz4/cuda_0:On/Lz4.OutputLimitAndLyingContentSize/cuda_0'
  [core]='On/Core.*/cuda_0:On/KernelSemantics.*/cuda_0'
  [shared]='On/KernelSemantics.SharedMemoryTreeReductionMatchesHostSum/cuda_0:On/KernelSemantics.TiledTransposeWithTwoDimensionalBlocks/cuda_0:On/KernelSemantics.DynamicSharedMemoryIsPerBlock/cuda_0:On/KernelSemantics.SyncthreadsCountAndOr/cuda_0:On/KernelSemantics.ExitedThreadsDoNotHoldBarriers/cuda_0'
)
lz4='lz4frames lz4decode lz4legacy lz4device lz4hostile'  # LZ4 round trips are slow under racecheck
declare -A groups=(
  [memcheck]="sha256 mine ciphers $lz4 core"
  [racecheck]="sha256 mine ciphers $lz4 shared"
  [synccheck]="sha256 mine ciphers $lz4 shared"
  [initcheck]="sha256 mine ciphers $lz4"
)
tools=${TOOLS:-memcheck racecheck synccheck initcheck}
export OPKIT_TEST_DEVICES=cuda:0 OPKIT_CACHE_DIR="$OUT/cache"
start=$(date +%s)
for tool in $tools; do
  for g in ${groups[$tool]}; do
    [[ " ${ONLY_GROUPS:-$g} " == *" $g "* ]] || continue
    (
      timeout "${SANITIZE_TIMEOUT_S:-400}" compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 \
        $B/tests/opkit_conformance_tests --gtest_filter="${group[$g]}" >"$OUT/sanitize_${tool}_$g.txt" 2>&1
      echo $? >"$OUT/sanitize_${tool}_$g.rc"
    ) &
  done
done

# The error count compute-sanitizer printed in LOG ("" when it printed none). racecheck prints no
# ERROR SUMMARY: its count is the hazards (errors and warnings) it found.
sanitizer_errors() {
  grep -oE 'ERROR SUMMARY: [0-9]+|RACECHECK SUMMARY: [0-9]+' "$1" | grep -oE '[0-9]+$' | tail -1
}

# The CLI's GPU paths, one process each, default options (API errors reported); SKIP_CLI=1 leaves them out.
opkit=$B/tools/opkit/opkit
printf '__global__ void k(float* a, int n) { int i = threadIdx.x; if (i < n) a[i] = 2.0f * i; }\n' >"$OUT/k.cu"
genesis=0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c
key32=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
cli_cases=(
  "hash-lines|hash --lines --device cuda $OUT/k.cu"
  "mine-data|mine --device cuda --data sanitize --difficulty 16 --quiet"
  "mine-header|mine --device cuda --header $genesis --start 2083236000 --count 10000 --quiet"
  "mine-all|mine --device all --data sanitize --difficulty 16 --quiet"
  "mine-job|mine --device cuda --job tests/data/stratum-block-100000.json --extranonce2 02 --start 273848111 --count 600000 --shares 1 --quiet"
  "doctor|doctor"
  "run|run $OUT/k.cu --kernel k --device cuda --block 64 --arg out:f32:64 --arg i32:64"
  "encrypt-gcm|encrypt --device cuda --cipher aes-256-gcm -K $key32 --iv 000102030405060708090a0b $OUT/data.bin $OUT/data.gcm"
  "decrypt-gcm|decrypt --device cuda --cipher aes-256-gcm -K $key32 --iv 000102030405060708090a0b $OUT/data.gcm $OUT/data.out"
  "encrypt-chacha|encrypt --device cuda --cipher chacha20-poly1305 -K $key32 --iv 000102030405060708090a0b $OUT/data.bin $OUT/data.ccp"
  "lz4-compress|lz4 --device cuda -f $OUT/data.bin"
  "lz4-decompress|lz4 --device cuda -d -f $OUT/data.bin.lz4"
)
head -c 3000000 "$(command -v cmake)" >"$OUT/data.bin"  # compressible, not a multiple of any block size
cp "$OUT/data.bin" "$OUT/data.orig"
: >"$OUT/sanitize_cli.txt"
cli_errors=0
if [ -n "${SKIP_CLI:-}" ]; then cli_cases=(); echo "CLI cases skipped (SKIP_CLI)" >"$OUT/sanitize_cli.txt"; fi
for entry in "${cli_cases[@]}"; do
  name=${entry%%|*}
  # shellcheck disable=SC2086  # the case's words are meant to split
  timeout 120 compute-sanitizer --error-exitcode 99 $opkit ${entry#*|} >"$OUT/sanitize_cli_$name.txt" 2>&1 </dev/null
  rc=$?
  errors=$(sanitizer_errors "$OUT/sanitize_cli_$name.txt")
  echo "cli $name: exit $rc, ${errors:-?} errors" >>"$OUT/sanitize_cli.txt"
  if [ "$rc" != 0 ] || [ "${errors:-1}" != 0 ]; then cli_errors=$((cli_errors + 1)); fi
done
# mine --pool on the GPU against the test pool (tests/stratum/test_pool.py, loopback, which checks
# every share with hashlib): 3 accepted shares, the pool's checks passed, 0 sanitizer errors.
if [ -n "${cli_cases[0]:-}" ] && command -v python3 >/dev/null; then
  (
    cd "$OUT" && rm -f pool.port pool.report &&
      python3 "$OLDPWD/tests/stratum/test_pool.py" accept pool.port pool.report --seconds 150 &
    pool=$!
    for _ in $(seq 100); do [ -f "$OUT/pool.port" ] && break; sleep 0.1; done
    timeout 140 compute-sanitizer --error-exitcode 99 $opkit mine --pool "stratum+tcp://127.0.0.1:$(cat "$OUT/pool.port")" \
      --user w1 --device cuda --count 4194304 --timeout 30 --shares 3 --json --quiet \
      >"$OUT/sanitize_cli_mine-pool.txt" 2>&1 </dev/null
    echo $? >"$OUT/sanitize_cli_mine-pool.rc"
    wait "$pool"
    echo $? >"$OUT/sanitize_cli_mine-pool.pool_rc"
  )
  rc=$(cat "$OUT/sanitize_cli_mine-pool.rc") pool_rc=$(cat "$OUT/sanitize_cli_mine-pool.pool_rc")
  errors=$(sanitizer_errors "$OUT/sanitize_cli_mine-pool.txt")
  accepted=$(grep -c '"event":"accepted"' "$OUT/sanitize_cli_mine-pool.txt")
  echo "cli mine-pool: exit $rc, ${errors:-?} errors, $accepted accepted, pool checks exit $pool_rc" >>"$OUT/sanitize_cli.txt"
  if [ "$rc" != 0 ] || [ "${errors:-1}" != 0 ] || [ "$accepted" != 3 ] || [ "$pool_rc" != 0 ]; then
    cli_errors=$((cli_errors + 1))
  fi
fi
# The job case must find block 100000's real nonce.
if [ -n "${cli_cases[0]:-}" ]; then
  grep -qF '"4d1b2237","10572b0f"' "$OUT/sanitize_cli_mine-job.txt" && echo "cli mine-job: the real nonce" >>"$OUT/sanitize_cli.txt" ||
    { echo "cli mine-job: the real nonce NOT found" >>"$OUT/sanitize_cli.txt"; cli_errors=$((cli_errors + 1)); }
fi
# The round trips must give the input back (the decompress case overwrote data.bin from data.bin.lz4).
for pair in ${cli_cases[0]:+"data.orig data.out" "data.orig data.bin"}; do
  set -- $pair
  cmp -s "$OUT/$1" "$OUT/$2" && echo "cli round trip $2: identical" >>"$OUT/sanitize_cli.txt" ||
    { echo "cli round trip $2: DIFFERS" >>"$OUT/sanitize_cli.txt"; cli_errors=$((cli_errors + 1)); }
done
rm -f "$OUT"/data.*
wait

echo "== compute-sanitizer, $(($(date +%s) - start)) s (logs in $OUT/sanitize_*.txt)"
status=0
printf '%-10s %-8s %5s %7s %7s %7s\n' tool group exit errors passed failed
for run in $(for t in $tools; do for g in ${groups[$t]}; do [[ " ${ONLY_GROUPS:-$g} " == *" $g "* ]] && echo "${t}_$g"; done; done); do
  tool=${run%%_*} g=${run#*_}
  log="$OUT/sanitize_$run.txt"
  rc=$(cat "$OUT/sanitize_$run.rc" 2>/dev/null || echo '?')
  errors=$(sanitizer_errors "$log")
  passed=$(grep -oE '\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  failed=$(grep -cE '^\[  FAILED  \] On/' "$log")
  printf '%-10s %-8s %5s %7s %7s %7s\n' "$tool" "$g" "$rc" "${errors:-?}" "${passed:-0}" "$failed"
  if [ "$rc" != 0 ] || [ "${errors:-1}" != 0 ] || [ "$failed" != 0 ] || [ "${passed:-0}" = 0 ]; then status=1; fi
done
cat "$OUT/sanitize_cli.txt"
[ "$cli_errors" = 0 ] || status=1
echo "sanitize: $([ $status = 0 ] && echo clean || echo ERRORS)"
exit $status
