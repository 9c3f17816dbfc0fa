#!/usr/bin/env bash
# On the GPU machine, after a build of the benches: the ChaCha20-Poly1305 bulk and batch rows side
# by side (opkit_cipher_bench --ciphers chacha20-poly1305: 1 GiB bulk, 10^6 x 64 B and 10^6 x 1500 B
# batches, host and device keys), then Nsight Compute on one launch of the LZ4 decoder over the
# mixed corpus (tools/ncu_stalls.py: stall reasons by SASS region), and every kernel's duration in
# the LZ4 API bench on logs.txt ($OUT/api_kernels.csv: which of the API's launches cost what).
# About 4 minutes on a warm machine:   OUT=/some/dir bash bench/device/cipher_batch_profile.sh
source "$(dirname "$0")/check_steps.sh"
timeout 240 cmake --build --preset release -j "$(nproc)" --target opkit_cipher_bench opkit_lz4_bench >"$L/build.txt" 2>&1
echo "build $? $(at)"
timeout 150 $B/bench/opkit_cipher_bench --ciphers chacha20-poly1305 --reps 7 >"$L/cipher.txt" 2>&1
echo "cipher bench: exit $? $(at)"
grep -E "ROW|rror" "$L/cipher.txt"
pack
source "$(dirname "$0")/lz4_corpora.sh"
source "$(dirname "$0")/ncu_profile.sh"
ncu_profile lz4_decompress 0 $B/bench/opkit_lz4_bench --block 4 --runs 1 --kernels-only $C/mixed.bin
timeout 200 ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
  -k "regex:^lz4_" $B/bench/opkit_lz4_bench --block 4 --runs 1 $C/logs.txt >"$OUT/api_kernels.csv" 2>&1
echo "API kernels: exit $? $(at)"
echo "total $(at)"
