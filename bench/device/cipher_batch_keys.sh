#!/usr/bin/env bash
# On the GPU machine: cipher batches with keys and IVs in device memory (issue 17) beside the
# host-key rows. Builds, runs the conformance suite's cipher cases on the GPU (every cipher, host
# and device keys, against OpenSSL), then `opkit_cipher_bench --batch-only 1` (10^6 x 64 B and
# 10^6 x 1500 B, every cipher: host keys, "-devkeys", "-devkeys-devtags" (AEAD encryption into and
# decryption against device tags), "-devkeys-nonce12")
# and prints the packet rows last with their ratio to the host-key row. About 5 minutes on 16 cores.
#   OUT=/some/dir bash bench/device/cipher_batch_keys.sh
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$OUT/gpu.txt"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null &&
  cmake --build --preset release -j "$(nproc)" --target opkit_conformance_tests opkit_cipher_bench 2>&1 | tail -1
echo "built after $(($(date +%s) - start)) s"
OPKIT_TEST_DEVICES=cuda timeout 240 $B/tests/opkit_conformance_tests --gtest_filter='*Cipher*' --gtest_brief=1 \
  >"$OUT/conformance_ciphers.txt" 2>&1
echo "conformance (cuda) exit $?: $(tail -1 "$OUT/conformance_ciphers.txt")"
grep -E "Failure|FAILED" "$OUT/conformance_ciphers.txt" | head -20
timeout "${BENCH_TIMEOUT_S:-330}" $B/bench/opkit_cipher_bench --batch-only 1 --reps "${REPS:-5}" \
  >"$OUT/cipher_batch_bench.txt" 2>&1
echo "opkit_cipher_bench exit $? (1: a row disagreed with OpenSSL, 3: an error) after $(($(date +%s) - start)) s"
# Each row's GB/s, and its ratio to the host-key row of the same cipher, shape and direction.
awk '/^ROW/ {
  op = $4; base = op; sub(/-devkeys.*/, "", base); key = $2 " " $3 " " base
  if (op == base) host[key] = $7
  printf "%-18s %-11s %-24s %8.3f ms %8.1f GB/s", $2, $3, op, $6, $7
  if (op != base && host[key] > 0) printf "  x%.2f of host keys", $7 / host[key]
  printf "  %s\n", $8
}' "$OUT/cipher_batch_bench.txt" | tee "$OUT/cipher_batch_table.txt"
grep -v '^ROW' "$OUT/cipher_batch_bench.txt" | tail -5
