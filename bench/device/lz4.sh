#!/usr/bin/env bash
# On the GPU machine, in under 6 minutes: build what LZ4 needs; run the LZ4 conformance cases on
# the GPU; build three corpora; then, on the same data at 64 KiB blocks/chunks:
#   opkit's kernels alone and the public C++ API on device buffers (bench/lz4_bench.cpp),
#   liblz4 on all host cores (opkit's host engine), the `lz4 -1` tool (one thread),
#   nvCOMP's LZ4 (bench/python/lz4_nvcomp.py, when the wheels are carried in .whl/);
# then, as time allows, the GPU and CLI tests and compute-sanitizer memcheck (corrupted frames)
# and racecheck (the decoder's shared memory) when installed.
# Every step runs under a timeout and on its own: a failing step leaves its log and the rest
# still run. The last thing printed is one table (also in $OUT/lz4_table.txt).
# Corpora (reproducible from the machine's own files, sorted by path, LC_ALL=C):
#   mixed.bin  the files under /usr/lib and /usr/share concatenated, first 256 MiB
#   python.txt every *.py file on the root file system concatenated (repeated up to 256 MiB if fewer)
#   logs.txt   256 MiB of generated log lines (awk, fixed seed): highly compressible
# Run from the repository root (carry .whl for nvCOMP):  OUT=/some/dir bash bench/device/lz4.sh
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH LC_ALL=C
B=build/release
S="$OUT/lz4_summary.txt"
: >"$S"
log() { echo "== $* ($(date +%T))" | tee -a "$S"; }
RUNS=${RUNS:-5}
# Each step's timeout is cut to what is left of a 330-second budget, so the table comes in time.
DEADLINE=$((SECONDS + ${LZ4_BUDGET_S:-330}))
budget() {
  local left=$((DEADLINE - SECONDS))
  if [ "$left" -lt "$1" ]; then echo $((left > 5 ? left : 5)); else echo "$1"; fi
}

log "build"
timeout 180 bash -c "cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j $(nproc) \
  --target opkit_conformance_tests opkit_gpu_tests opkit_cli opkit_lz4_bench" >"$OUT/lz4_build.txt" 2>&1
echo "build exit status $?" | tee -a "$S"
tail -3 "$OUT/lz4_build.txt"

log "conformance tests on the GPU"
OPKIT_TEST_DEVICES=cuda:0 timeout "$(budget 60)" $B/tests/opkit_conformance_tests --gtest_filter='On/Lz4.*' --gtest_brief=1 \
  >"$OUT/lz4_conformance.txt" 2>&1
echo "conformance (cuda) exit status $?: $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/lz4_conformance.txt" | tr '\n' ' ')" | tee -a "$S"
log "corpora"
source "$(dirname "$0")/lz4_corpora.sh"
ls -l $C | tee -a "$S"

log "opkit: kernels, C++ API on device buffers, liblz4 on $(nproc) host cores; 64 KiB blocks"
timeout "$(budget 110)" $B/bench/opkit_lz4_bench --block 4 --runs "$RUNS" $FILES >"$OUT/lz4_bench.txt" 2>&1
echo "bench exit status $? (1: a result was wrong, 124: timed out)" | tee -a "$S"
cat "$OUT/lz4_bench.txt"

log "lz4 -1 -B4 -BI tool (one thread)"
: >"$OUT/lz4_tool.txt"
for f in $FILES; do
  n=$(stat -c %s $f)
  t0=$(date +%s.%N); timeout "$(budget 20)" lz4 -1 -B4 -BI -q -c $f >$C/tool.lz4 2>/dev/null; t1=$(date +%s.%N)
  timeout "$(budget 20)" lz4 -d -q -c $C/tool.lz4 >/dev/null 2>&1; t2=$(date +%s.%N)
  m=$(stat -c %s $C/tool.lz4)
  awk -v f="$(basename $f) ($((n >> 20)) MiB)" -v n=$n -v m=$m -v a=$t0 -v b=$t1 -v c=$t2 \
    'BEGIN { if (m > 0) printf "%-28s %-26s ratio %.3f  compress %7.2f GB/s (median %7.2f)  decompress %7.2f GB/s (median %7.2f)\n", f, "lz4 -1 tool 1 thread", n / m, n / (b - a) / 1e9, n / (b - a) / 1e9, n / (c - b) / 1e9, n / (c - b) / 1e9 }' \
    >>"$OUT/lz4_tool.txt"
done
cat "$OUT/lz4_tool.txt"

if ls .whl/*nvcomp*.whl >/dev/null 2>&1; then
  log "nvCOMP LZ4 (device-resident, 64 KiB chunks)"
  timeout "$(budget 30)" python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    >"$OUT/lz4_pip.txt" 2>&1
  PYTHONPATH=/tmp/site timeout "$(budget 80)" python3 bench/python/lz4_nvcomp.py --chunk 65536 --runs "$RUNS" $FILES \
    >"$OUT/lz4_nvcomp.txt" 2>&1
  echo "nvcomp exit status $?" | tee -a "$S"
  cat "$OUT/lz4_nvcomp.txt"
else
  echo "(nvCOMP skipped: no .whl/ with nvidia-nvcomp-cu13 + nvidia-libnvcomp-cu13)" | tee -a "$S"
fi

log "more tests: GPU, CLI, sanitizers"
timeout "$(budget 40)" $B/tests/opkit_gpu_tests --gtest_filter='Lz4*' --gtest_brief=1 >"$OUT/lz4_gpu_tests.txt" 2>&1
echo "gpu tests exit status $?: $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/lz4_gpu_tests.txt" | tr '\n' ' ')" | tee -a "$S"
timeout "$(budget 120)" bash tests/cli/test_lz4.sh "$B/tools/opkit/opkit" >"$OUT/lz4_cli.txt" 2>&1
echo "cli test exit status $? (0 ok, 77 skipped)" | tee -a "$S"
# memcheck: no read or write out of bounds on hostile frames; racecheck: the decoder's shared-memory
# batches. API errors are not reported (opkit probes parameter lists until CUDA_ERROR_INVALID_VALUE).
if command -v compute-sanitizer >/dev/null; then
  for check in "memcheck On/Lz4.Truncated*:On/Lz4.Mutated*:On/Lz4.OutputLimit*" "racecheck On/Lz4.Truncated*"; do
    tool=${check%% *} filter=${check#* }
    OPKIT_TEST_DEVICES=cuda:0 timeout "$(budget 60)" compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 9 \
      $B/tests/opkit_conformance_tests --gtest_filter="$filter" >"$OUT/lz4_$tool.txt" 2>&1
    echo "$tool exit status $? (0: none found; 9: found some; 124: timed out): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) ' "$OUT/lz4_$tool.txt" | tr '\n' ' ')" | tee -a "$S"
  done
fi

log "table (GB/s of uncompressed bytes, best of $RUNS; x nvCOMP: speed over nvCOMP LZ4 on that corpus)"
cat "$OUT/lz4_bench.txt" "$OUT/lz4_tool.txt" "$OUT/lz4_nvcomp.txt" 2>/dev/null | grep -E " ratio [0-9]" | awk '
  { file = $1; engine = substr($0, 30, 26); sub(/ +$/, "", engine)
    for (i = 1; i <= NF; i++) { if ($i == "ratio") r = $(i + 1); if ($i == "compress") c = $(i + 1); if ($i == "decompress") d = $(i + 1) }
    n++; F[n] = file; E[n] = engine; R[n] = r; Cs[n] = c; D[n] = d
    if (engine ~ /^lz4 -1/) tool[file] = r
    if (engine ~ /^nvCOMP LZ4/) { nvc[file] = c; nvd[file] = d; nvr[file] = r } }
  END {
    printf "%-12s %-26s %7s %9s %10s %10s %9s %9s\n", "corpus", "engine", "ratio", "vs lz4-1", "comp GB/s", "dec GB/s", "x nvCOMP", "x nvCOMP"
    for (i = 1; i <= n; i++) {
      vs = (F[i] in tool) ? sprintf("%+.1f%%", 100 * (R[i] / tool[F[i]] - 1)) : "-"
      xc = (F[i] in nvc && nvc[F[i]] > 0) ? sprintf("%.2f", Cs[i] / nvc[F[i]]) : "-"
      xd = (F[i] in nvd && nvd[F[i]] > 0) ? sprintf("%.2f", D[i] / nvd[F[i]]) : "-"
      printf "%-12s %-26s %7s %9s %10s %10s %9s %9s\n", F[i], E[i], R[i], vs, Cs[i], D[i], xc, xd } }' | tee "$OUT/lz4_table.txt"
