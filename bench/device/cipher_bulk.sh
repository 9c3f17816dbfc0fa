#!/usr/bin/env bash
# On the GPU machine: every cipher's 1 GiB bulk rows through the public C++ API on device buffers
# (bulk GCM with both GHASH engines), the AES-128 batch rows (10^6 x 1500 B) for the batch-to-bulk
# ratios, and OpenSSL's AES-256-GCM and ChaCha20-Poly1305 on all host cores beside them (the
# issue's anchors, `openssl speed -multi`). About 3 minutes from a fresh machine:
#   OUT=/some/dir bash bench/device/cipher_bulk.sh
source "$(dirname "$0")/check_steps.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 200 bash -c "cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && \
  cmake --build --preset release -j $(nproc) --target opkit_cipher_bench" >"$L/build.txt" 2>&1
echo "build $? $(at)"
timeout 150 $B/bench/opkit_cipher_bench --bulk-only 1 --aes-ghash tensor_cores,horner --reps 7 >"$L/bulk.txt" 2>&1
echo "bulk: exit $? $(at)"
grep ROW "$L/bulk.txt" | grep -v b2b
pack
timeout 120 $B/bench/opkit_cipher_bench --batch-only 1 --ciphers aes-128-ctr,aes-128-gcm --reps 5 >"$L/batch.txt" 2>&1
echo "batch: exit $? $(at)"
grep ROW "$L/batch.txt" | grep 1500
pack
for evp in aes-256-gcm chacha20-poly1305; do
  timeout 30 openssl speed -evp $evp -multi "$(nproc)" -bytes 16384 -seconds 3 >"$L/openssl-$evp.txt" 2>&1
  echo "openssl $evp -multi $(nproc), 16384-byte blocks (k = 1000 bytes/s): $(tail -1 "$L/openssl-$evp.txt")"
done
pack
echo "total $(at)"
