#!/usr/bin/env bash
# On the GPU machine: the checks that changes to the LZ4 decoder and the AEAD kernel need, in one
# call: variants.sh (the decoder's short-part bound, the decoder under memcheck and racecheck, the
# AEAD kernel's rolled rounds against unrolled), the LZ4 and Poly1305 GPU tests and the same under
# memcheck (racecheck of that binary takes more than 150 s on an H100: the decoder's racecheck is
# variants.sh's, over the corpora), nvCOMP LZ4 beside opkit's kernels, API and host engine on the three
# corpora, and the ChaCha20 / ChaCha20-Poly1305 bulk rows. About 7 minutes from a fresh machine
# (carry .whl and .deps):   OUT=/some/dir bash bench/device/lz4_aead_check.sh
OUT=$OUT SANITIZE="LZ4K_SHORT=128" DECODERS="LZ4K_SHORT=128 LZ4K_SHORT=64 LZ4K_SHORT=256" AEADS="default,CHACHA20_AEAD_ROUNDS_UNROLL=9" bash bench/device/variants.sh 2>&1 | tail -30
source bench/device/check_steps.sh; source bench/device/lz4_corpora.sh
timeout 200 cmake --build --preset release -j 16 --target opkit_gpu_tests >"$L/b.txt" 2>&1; echo "build $?"
timeout 120 $B/tests/opkit_gpu_tests --gtest_filter='*Lz4*:*ChaCha*:*Chacha*:*Poly*' --gtest_brief=1 2>&1 | tail -3
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 $B/tests/opkit_gpu_tests \
  --gtest_filter='*Lz4*:*Poly*' --gtest_brief=1 2>&1 | grep -E "SUMMARY|PASSED|FAILED" | tr '\n' ' '
echo " memcheck $(at)"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null; PYTHONPATH=/tmp/site timeout 90 python3 bench/python/lz4_nvcomp.py --chunk 65536 --runs 5 $FILES 2>&1 | grep ratio
timeout 200 $B/bench/opkit_lz4_bench --block 4 --runs 3 $FILES 2>&1 | grep -E "ratio|rror|WRONG"
timeout 60 $B/bench/opkit_cipher_bench --bulk-only 1 --ciphers chacha20-poly1305,chacha20 --reps 7 2>&1 | grep ROW
echo "total $(at)"
