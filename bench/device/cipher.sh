#!/usr/bin/env bash
# On the GPU machine (H200): every cipher, side by side with its anchors, in one run (< 6 min).
#   1. build; the cipher unit tests (CPU backend), GPU tests, and the conformance suite's cipher
#      cases on the GPU (every cipher, bulk and batch, against OpenSSL);
#   2. opkit_cipher_bench: every cipher through the public C++ API on device buffers (1 GiB bulk,
#      10^6 x 64 B and 10^6 x 1500 B batches) and the ChaCha20 keystream kernel alone; the
#      ChaCha20-Poly1305 kernel's Poly1305 variants (--poly1305-chains) side by side;
#      opkit_aes_bench: AES through its device entry points (aes_device.hpp: no host checks or
#      uploads besides the key; device-resident batch keys);
#   3. SASS per byte of the bulk kernels (tools/sass_count.py) and the ALU-pipe limit they imply;
#   4. `openssl speed -evp ... -multi $(nproc)` on the host, and hashcat's AES / ChaCha20 kernels
#      (needs the debs carried in .anchor/: ../shared/tools/hashcat-anchor fetch .anchor);
#   5. one table last: GB/s (10^9 bytes/s) and ratios to the host CPU and to hashcat.
#   OUT=/some/dir bash bench/device/cipher.sh
# Environment: SKIP_HASHCAT=1 leaves hashcat out (HASHCAT_TIMEOUT_S bounds it); CIPHER_TESTS=0 skips the tests; CUOBJDUMP=path if cuobjdump is not on PATH or
# in /usr/local/cuda/bin (.anchor/cuobjdump/bin/cuobjdump is also looked at).
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
S="$OUT/cipher_summary.txt"
: >"$S"
log() { echo "== $*" | tee -a "$S"; }
start=$(date +%s)

log "build"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null &&
  cmake --build --preset release -j "$(nproc)" --target opkit_unit_tests opkit_gpu_tests opkit_conformance_tests \
    opkit_cipher_bench opkit_aes_bench 2>&1 | tail -2

if [ "${CIPHER_TESTS:-1}" != 0 ]; then
  log "tests"
  $B/tests/opkit_unit_tests --gtest_filter='AesKernels*:AesSass*:Cipher*' --gtest_brief=1 >"$OUT/cipher_unit.txt" 2>&1
  tail -2 "$OUT/cipher_unit.txt" | tee -a "$S"
  $B/tests/opkit_gpu_tests --gtest_filter='*Aes*:*Cipher*:*ChaCha*:*Chacha*' --gtest_brief=1 >"$OUT/cipher_gpu_tests.txt" 2>&1
  tail -2 "$OUT/cipher_gpu_tests.txt" | tee -a "$S"
  OPKIT_TEST_DEVICES=cuda $B/tests/opkit_conformance_tests --gtest_filter='*Ciphers*' --gtest_brief=1 \
    >"$OUT/cipher_conformance.txt" 2>&1
  tail -2 "$OUT/cipher_conformance.txt" | tee -a "$S"
else
  log "tests skipped (CIPHER_TESTS=0)"
fi

log "benchmarks (GPU, device-resident)"
nvidia-smi --query-gpu=clocks.sm,utilization.gpu --format=csv,noheader,nounits -lms 100 >"$OUT/cipher_clocks.csv" 2>/dev/null &
smi=$!
$B/bench/opkit_cipher_bench >"$OUT/cipher_bench.txt" 2>&1
echo "opkit_cipher_bench exit status: $? (1: a case disagreed with OpenSSL, 3: an error)" | tee -a "$S"
$B/bench/opkit_aes_bench --cubin "$OUT/aes.cubin" >"$OUT/aes_bench.txt" 2>&1
echo "opkit_aes_bench exit status: $?" | tee -a "$S"
# chacha20_bulk.cu's Poly1305 evaluations side by side (POLY1305_CHAINS; 16 is the default).
$B/bench/opkit_cipher_bench --poly1305-chains 16,1,16,1 >"$OUT/poly1305_chains.txt" 2>&1
echo "Poly1305 variants (exit $?):" | tee -a "$S"
grep '^ROW' "$OUT/poly1305_chains.txt" | tee -a "$S"
kill $smi 2>/dev/null
clock_mhz=$(awk -F', *' '$2 >= 90 {print $1}' "$OUT/cipher_clocks.csv" | sort -n |
  awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 1980)}')
echo "SM clock under load (median): $clock_mhz MHz" | tee -a "$S"

log "SASS per byte (ALU pipe: 63/SM/clk x 132 SMs x clock)"
$B/bench/opkit_cipher_bench --cubins "$OUT" >/dev/null 2>&1
cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || echo .anchor/cuobjdump/bin/cuobjdump)}
if [ -x "$cuobjdump" ]; then
  export CUOBJDUMP=$cuobjdump PATH=$(dirname "$cuobjdump"):$PATH
  sass() {  # cubin kernel bytes-per-thread -> "static ALU/B" "round-loop ALU/B per iteration"
    python3 tools/sass_count.py "$1" --kernel "$2" --per "$3" 2>/dev/null | tee -a "$OUT/cipher_sass.txt" |
      awk '/per hash/ {s = $5 + 0} /loop/ && $6 + 0 > a {a = $6 + 0} END {print s, a + 0}'
  }
  read -r aes_static aes_round <<<"$(sass "$OUT/aes.cubin" aes_ctr_masked 512)"
  read -r cc_static _ <<<"$(sass "$OUT/chacha20_bulk.cubin" chacha20_xor 128)"  # 2 blocks per thread
  # Dynamic count, aligned bulk: the code outside loops once (for AES an upper bound: it also holds
  # the unaligned byte-by-byte paths that aligned data skips; chacha20_xor has none) plus the round
  # loop Nr - 1 times. The aligned path alone: tools/sass_count.py --range (see
  # bench/results/2026-12-03-cipher-sass.md).
  for c in "aes-128-ctr 9 $aes_static $aes_round" "aes-256-ctr 13 $aes_static $aes_round" "chacha20 0 $cc_static 0"; do
    set -- $c
    awk -v c="$1" -v r="$2" -v s="$3" -v l="$4" -v mhz="$clock_mhz" 'BEGIN {
      alu = s + r * l; printf "sass %-12s ALU/byte %5.1f (static %.1f + %d x %.1f)  ALU-pipe limit %6.0f GB/s\n",
      c, alu, s, r, l, 132 * 63 * mhz * 1e6 / alu / 1e9 }' | tee -a "$S"
  done
else
  echo "no cuobjdump: SASS counts skipped (set CUOBJDUMP)" | tee -a "$S"
fi

log "openssl speed, all cores ($(nproc))"
for c in aes-128-ctr aes-256-ctr aes-128-gcm aes-256-gcm chacha20 chacha20-poly1305; do
  openssl speed -evp "$c" -multi "$(nproc)" -bytes 16384 -seconds 2 2>/dev/null | tail -1 |
    awk -v c="$c" '{printf "openssl %s %.1f\n", c, $NF / 1e6}' | tee -a "$OUT/cipher_openssl.txt" | tee -a "$S"
done

log "hashcat anchors (26401 AES-128, 26403 AES-256, 15400 ChaCha20)"
if [ -z "${SKIP_HASHCAT:-}" ] && [ -f .anchor/hashcat-anchor ]; then
  timeout "${HASHCAT_TIMEOUT_S:-240}" bash .anchor/hashcat-anchor run .anchor 26401 26403 15400 2>&1 | tee "$OUT/cipher_hashcat.txt" | tee -a "$S"
else
  echo "hashcat skipped (no .anchor/hashcat-anchor: ../shared/tools/hashcat-anchor fetch .anchor)" | tee -a "$S"
fi

log "table (GB/s = 10^9 bytes/s; x cpu: over openssl -multi $(nproc); x hashcat: over its keystream rate)"
# hashcat speeds to keystream GB/s: one 16-byte AES block or one 64-byte ChaCha20 block per trial.
awk '
  FILENAME ~ /openssl/ { cpu[$2] = $3; next }
  FILENAME ~ /hashcat/ {
    v = $(NF - 1); u = $NF; scale = (u ~ /^G/) ? 1 : (u ~ /^M/) ? 1e-3 : (u ~ /^k/) ? 1e-6 : 0
    per = ($2 == 15400) ? 64 : 16; name = ($2 == 26401) ? "aes-128-ctr" : ($2 == 26403) ? "aes-256-ctr" : "chacha20"
    if (scale > 0) hc[name] = v * scale * per; next
  }
  /^ROW / {
    key = $2; r = sprintf("%-18s %-10s %-15s %8.1f", $2, $3, $4, $7)
    r = r sprintf(cpu[key] ? "  %6.2f" : "  %6s", cpu[key] ? $7 / cpu[key] : "-")
    r = r sprintf(hc[key] ? "  %6.2f" : "  %6s", hc[key] ? $7 / hc[key] : "-")
    rows[++n] = r "  " $8
  }
  END {
    printf "%-18s %-10s %-15s %8s  %6s  %6s  %s\n", "cipher (API)", "shape", "op", "GB/s", "x cpu", "x hc", "check"
    for (i = 1; i <= n; ++i) print rows[i]
    for (k in cpu) printf "openssl -multi  %-18s %8.1f GB/s\n", k, cpu[k]
    for (k in hc) printf "hashcat         %-18s %8.1f GB/s of keystream\n", k, hc[k]
  }' "$OUT/cipher_openssl.txt" $( [ -f "$OUT/cipher_hashcat.txt" ] && echo "$OUT/cipher_hashcat.txt") \
  "$OUT/cipher_bench.txt" | tee -a "$S"
echo "device entry points (aes_device.hpp):" | tee -a "$S"
grep -E "^(cipher|aes)" "$OUT/aes_bench.txt" | tee -a "$S"
echo "elapsed $(( $(date +%s) - start )) s" | tee -a "$S"
