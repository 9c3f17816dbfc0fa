#!/usr/bin/env bash
# On the GPU machine, first thing after 2026-12-07's fix of host bytes read by queued copies
# (src/ops/cipher/host_bytes_in_flight.hpp): the conformance suite's cipher, SHA-256 and LZ4 cases
# on the GPU twice (On/CipherDeviceKeys.DeviceTagsOpenOnTheStreamThatSealedThem/cuda_0 failed
# before the fix), compute-sanitizer racecheck and memcheck on the AES batch GPU tests and
# racecheck on the AES batches in small slices on two streams, then the AES batch rows (slices of
# 2^18 messages on two streams, and one slice of all 10^6) against bulk. One line a step, logs in
# $OUT (packed into $OUT/logs.tgz: the device tool returns few files). About 6 minutes on 16 cores
# from a fresh machine. Run from the repository root:
#   OUT=/some/dir bash bench/device/stream_order_check.sh
source "$(dirname "$0")/check_steps.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 240 bash -c "cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j $(nproc) \
  --target opkit_conformance_tests opkit_gpu_tests opkit_cipher_bench opkit_lz4_bench" >"$L/build.txt" 2>&1
echo "build $? $(at)"
export OPKIT_TEST_DEVICES=cuda:0
for i in 1 2; do
  timeout 120 $B/tests/opkit_conformance_tests --gtest_filter='On/Cipher*/cuda_0:On/Sha256*/cuda_0:On/Lz4*/cuda_0' \
    --gtest_brief=1 >"$L/conformance_$i.txt" 2>&1
  echo "conformance run $i: exit $? $(at): $(summary "$L/conformance_$i.txt")"
done
grep -h -E "^\[  FAILED" "$L"/conformance_*.txt | sort | uniq -c | head
grep -h -B2 -A12 "Failure" "$L"/conformance_*.txt | head -40
for tool in racecheck memcheck; do
  timeout 120 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 99 \
    $B/tests/opkit_gpu_tests --gtest_filter='AesGpu.Batches*' --gtest_brief=1 >"$L/$tool.txt" 2>&1
  echo "$tool AesGpu.Batches*: exit $? $(at): $(summary "$L/$tool.txt")"
done
# The AES batches in slices of a few messages on two streams (the call's and a side stream).
timeout 150 compute-sanitizer --tool racecheck --report-api-errors no --error-exitcode 99 \
  $B/tests/opkit_conformance_tests --gtest_filter='On/CipherStagedInputs.AesBatchesInSlices*/cuda_0' --gtest_brief=1 \
  >"$L/racecheck_slices.txt" 2>&1
echo "racecheck AesBatchesInSlices: exit $? $(at): $(summary "$L/racecheck_slices.txt")"
# Slices of 2^18 messages alternating between two streams (the default), and one slice of all 10^6.
timeout 150 $B/bench/opkit_cipher_bench --batch-only 1 --ciphers aes-128-ctr,aes-256-ctr,aes-128-gcm \
  --aes-slices 262144,1048576 --reps 3 >"$L/aes_batch.txt" 2>&1
echo "aes batch: exit $? $(at)"
grep ROW "$L/aes_batch.txt" | grep "1000000x1500"
timeout 30 $B/bench/opkit_cipher_bench --bulk-only 1 --ciphers aes-128-ctr,aes-256-ctr,aes-128-gcm --reps 3 \
  >"$L/aes_bulk.txt" 2>&1
echo "aes bulk: exit $? $(at)"
grep ROW "$L/aes_bulk.txt" | grep -v b2b
pack
echo "total $(at)"
