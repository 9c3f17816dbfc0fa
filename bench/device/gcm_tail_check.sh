#!/usr/bin/env bash
# On the GPU machine, after the tensor cores took the partial chunks of bulk GCM too (the Horner
# kernel jumping over their blocks): the standalone chunk check, the GCM tests against OpenSSL
# with both GHASH engines, the bulk GCM rows with both, and memcheck on the chunk-boundary test.
# About 3 minutes from a fresh machine. Run from the repository root:
#   OUT=/some/dir bash bench/device/gcm_tail_check.sh
source "$(dirname "$0")/check_steps.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O3 -arch=sm_90 -I src/ops/cipher/kernels bench/device/ghash_mma_check.cu -o "$L/ghash_mma_check" && "$L/ghash_mma_check"
timeout 150 bash -c "cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && \
  cmake --build --preset release -j $(nproc) --target opkit_gpu_tests opkit_cipher_bench" >"$L/build.txt" 2>&1
echo "build $? $(at)"
timeout 90 $B/tests/opkit_gpu_tests --gtest_filter='AesGpu.Gcm*:AesGpu.CtrAndGcm*' --gtest_brief=1 >"$L/aes_gpu.txt" 2>&1
echo "AesGpu GCM: exit $? $(at): $(summary "$L/aes_gpu.txt")"
grep -h -B2 -A8 "Failure" "$L/aes_gpu.txt" | head -20
timeout 60 $B/bench/opkit_cipher_bench --bulk-only 1 --ciphers aes-256-gcm,aes-128-gcm --aes-ghash tensor_cores,horner \
  --reps 5 >"$L/bulk.txt" 2>&1
echo "bulk: exit $? $(at)"
grep ROW "$L/bulk.txt" | grep -v b2b
pack
timeout 80 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 \
  $B/tests/opkit_gpu_tests --gtest_filter='AesGpu.GcmMatchesOpenSslAround*' --gtest_brief=1 >"$L/memcheck_gcm.txt" 2>&1
echo "memcheck AesGpu GCM tensor cores: exit $? $(at): $(summary "$L/memcheck_gcm.txt")"
pack
echo "total $(at)"
