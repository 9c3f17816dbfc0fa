#!/usr/bin/env bash
# On the GPU machine (H200): build; run the AES unit tests (CPU backend) and GPU tests; time 1 GiB
# device-resident AES-128/256-CTR and AES-128/256-GCM encrypt and decrypt(-verify), and batches of
# 10^6 packets of 1500 bytes (CUDA events, median of 7, each case checked against OpenSSL); count
# the AES kernels' SASS per pipe; compare with `openssl speed -evp ... -multi $(nproc)`. Logs go
# to $OUT; the last lines printed are the table.   OUT=/some/dir bash bench/device/aes.sh  (~4 min)
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
S="$OUT/aes_summary.txt"
: >"$S"
log() { echo "== $*" | tee -a "$S"; }

log "build"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null &&
  cmake --build --preset release -j 16 --target opkit_unit_tests opkit_gpu_tests opkit_aes_bench 2>&1 | tail -2

log "tests"
$B/tests/opkit_unit_tests --gtest_filter='AesKernels*:AesSass*' --gtest_brief=1 >"$OUT/aes_unit.txt" 2>&1
tail -3 "$OUT/aes_unit.txt" | tee -a "$S"
$B/tests/opkit_gpu_tests --gtest_filter='AesGpu*' --gtest_brief=1 >"$OUT/aes_gpu_tests.txt" 2>&1
tail -3 "$OUT/aes_gpu_tests.txt" | tee -a "$S"

log "benchmark (GPU, device-resident)"
nvidia-smi --query-gpu=clocks.sm,utilization.gpu --format=csv,noheader,nounits -lms 100 >"$OUT/aes_clocks.csv" 2>/dev/null &
smi=$!
$B/bench/opkit_aes_bench --cubin "$OUT/aes.cubin" >"$OUT/aes_bench.txt" 2>&1
echo "bench exit status: $? (1: a case disagreed with OpenSSL)" | tee -a "$S"
kill $smi 2>/dev/null
clock_mhz=$(awk -F', *' '$2 >= 90 {print $1}' "$OUT/aes_clocks.csv" | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 1980)}')
echo "SM clock under load (median): $clock_mhz MHz" | tee -a "$S"

log "SASS per byte (32 blocks = 512 bytes per thread; loop = one middle round)"
for k in aes_ctr_masked aes_ctr aes_ghash; do
  python3 tools/sass_count.py "$OUT/aes.cubin" --kernel "$k" --per 512 --clock-ghz "$(echo "$clock_mhz / 1000" | bc -l)" 2>&1 |
    grep -E "^$k:|pipes|per hash|loop .*ALU [1-9]" | head -6 | tee -a "$S"
done

log "openssl speed, all cores ($(nproc))"
for c in aes-128-ctr aes-256-ctr aes-128-gcm aes-256-gcm; do
  openssl speed -evp "$c" -multi "$(nproc)" -bytes 16384 -seconds 2 2>/dev/null | tail -1 |
    awk -v c="$c" '{printf "openssl %-12s %8.1f GB/s\n", c, $NF / 1e6}' | tee -a "$S"
done

log "table (GB/s = 10^9 bytes/s)"
cat "$OUT/aes_bench.txt" | tee -a "$S"
