#!/usr/bin/env bash
# On the GPU machine: compute-sanitizer memcheck and racecheck over the operator kernels
# (SHA-256 fixed and variable length, Bitcoin and data-mode mining) through the conformance suite on the GPU.
# API errors are not reported: opkit probes a kernel's parameter list with cuFuncGetParamInfo
# until it answers CUDA_ERROR_INVALID_VALUE, which is how the driver says "no more parameters".
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
filter='On/Sha256.EmptyBatchAndBatchOfOne/*:On/Sha256.SeveralMessagesPerThreadAndPartialBlocksMatchOpenSsl/*:On/Sha256.DeviceVariableBatchOnAStreamMatchesOpenSsl/*:On/Sha256.BadOffsetsAreReportedByMessageIndex/*:On/Mine.RealHeadersGiveTheRealNonceAndHashIn2To20Nonces/*:On/Mine.CandidateThatOnlyMatchesTheTopWordIsSkipped/*:On/Core.TutorialKernelDoublesIndices/*'
for tool in memcheck racecheck; do
  OPKIT_TEST_DEVICES=cuda:0 timeout 200 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 99 $B/tests/opkit_conformance_tests --gtest_filter="$filter" \
    >"$OUT/sanitizer_$tool.txt" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/sanitizer_$tool.txt" | tr '\n' ' ')"
done
