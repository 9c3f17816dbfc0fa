#!/usr/bin/env bash
# On the GPU machine: bulk GCM's GHASH on the tensor cores (aes_ghash_mma.cuh: the probe of the
# tensor pipe's 1-bit rate, the standalone check against the Horner loop, then the library's GCM
# tests against OpenSSL with both engines and the bulk rows with both), and 2026-12-07's change of
# how an AEAD batch's host tags travel (decryption: expected tags staged with the keys through the
# pinned ring; encryption: tags back through kept pinned memory): every cipher conformance case on
# the GPU, the AEAD and AES-CTR batch packet rows, compute-sanitizer memcheck and racecheck on the
# tensor-core GCM tests. One line a step; logs packed into $OUT/logs.tgz. About 9
# minutes on 16 cores from a fresh machine. Run from the repository root:
#   OUT=/some/dir bash bench/device/host_tags_check.sh
source "$(dirname "$0")/check_steps.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
# The tensor pipe's GF(2) dot-product rates (b1 AND-popcount, s8), for GHASH as a matrix product.
nvcc -O3 -arch=sm_90 bench/device/gf2_mma_probe.cu -o "$L/gf2_mma_probe" && "$L/gf2_mma_probe"
cuobjdump -sass "$L/gf2_mma_probe" | grep -oE "[A-Z]MMA[.A-Z0-9]*" | sort | uniq -c
# GHASH on the tensor cores (aes_ghash_mma.cuh) against the Horner loop, and both timed on 1 GiB.
nvcc -O3 -arch=sm_90 -I src/ops/cipher/kernels bench/device/ghash_mma_check.cu -o "$L/ghash_mma_check" && "$L/ghash_mma_check"
echo "ghash mma check: exit $? $(at)"
timeout 260 bash -c "cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && \
  cmake --build --preset release -j $(nproc) --target opkit_gpu_tests opkit_cipher_bench" >"$L/build.txt" 2>&1
echo "build $? $(at)"; tail -3 "$L/build.txt"
export OPKIT_TEST_DEVICES=cuda:0
# Bulk GCM with GHASH on the tensor cores against OpenSSL, then under memcheck and racecheck.
timeout 120 $B/tests/opkit_gpu_tests --gtest_filter='AesGpu.Gcm*:AesGpu.CtrAndGcm*' --gtest_brief=1 >"$L/aes_gpu.txt" 2>&1
echo "AesGpu GCM: exit $? $(at): $(summary "$L/aes_gpu.txt")"
grep -h -B2 -A8 "Failure" "$L/aes_gpu.txt" | head -30
timeout 90 $B/bench/opkit_cipher_bench --bulk-only 1 --ciphers aes-128-gcm,aes-256-gcm,chacha20-poly1305,aes-128-ctr,aes-256-ctr \
  --aes-ghash tensor_cores,horner --reps 3 >"$L/bulk.txt" 2>&1
echo "bulk: exit $? $(at)"
grep ROW "$L/bulk.txt" | grep -v b2b
pack
for tool in memcheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 99 \
    $B/tests/opkit_gpu_tests --gtest_filter='AesGpu.GcmMatchesOpenSslAround*' --gtest_brief=1 \
    >"$L/${tool}_gcm.txt" 2>&1
  echo "$tool AesGpu GCM tensor cores: exit $? $(at): $(summary "$L/${tool}_gcm.txt")"
done
pack
timeout 200 cmake --build --preset release -j "$(nproc)" --target opkit_conformance_tests >"$L/build_conformance.txt" 2>&1
echo "build conformance $? $(at)"
timeout 120 $B/tests/opkit_conformance_tests --gtest_filter='On/Cipher*/cuda_0' --gtest_brief=1 >"$L/conformance.txt" 2>&1
echo "conformance On/Cipher*: exit $? $(at): $(summary "$L/conformance.txt")"
grep -h -B2 -A12 "Failure" "$L/conformance.txt" | head -40
pack
timeout 100 $B/bench/opkit_cipher_bench --batch-only 1 --small 64 \
  --ciphers aes-128-gcm,chacha20-poly1305,aes-128-ctr --reps 3 >"$L/batch.txt" 2>&1
echo "batch: exit $? $(at)"
grep ROW "$L/batch.txt" | grep "x1500"
pack
pack
echo "total $(at)"
