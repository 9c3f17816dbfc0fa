#!/usr/bin/env bash
# On the GPU machine: the compressor kernel's speed and ratio against its hash table's size and
# the LZ4 blocks a thread block and the bytes its hash reads (CASES, "entries:blocks[:hash]"; the
# API's defaults are DeviceLz4::default_small_table_entries, default_blocks_per_cta and default_small_hash_bytes), beside
# nvCOMP's LZ4 on the same three corpora, 64 KiB blocks; then the LZ4 GPU tests and compute-sanitizer on the compressor. The table sets
# the shared memory a thread block takes (blocks x 2 x entries + the 1 KiB the GPU reserves), and
# with it how much of each SM's 256 KiB stays L1 cache. The default cases end with the first again (drift).
# `lz4 -1`'s ratios on these corpora (the tool is not on the GPU image; CPU measured, same files):
# 2.164 / 2.735 / 3.234. About 4 minutes from a fresh machine (carry .whl for nvCOMP, .deps for
# libxxhash):   OUT=/some/dir CASES="3072:1 2816:2 3072:1" bash bench/device/lz4_tables.sh
# RACECHECK=0 and API=0 leave out the two slowest steps (~50 and ~25 s); TESTS=0 the GPU tests and
# sanitizers altogether (and their build); AEAD=1 adds the ChaCha20-Poly1305 bulk and batch rows
# (opkit_cipher_bench --ciphers chacha20-poly1305); DECODERS (below) the decoder versions timed
# side by side. The shortest useful call, ~6 minutes fresh:
#   OUT=/some/dir CASES="2624:1:5 2560:1:5 3072:1:4" RUNS=3 TESTS=0 AEAD=1 bash bench/device/lz4_tables.sh
source "$(dirname "$0")/check_steps.sh"
CASES=${CASES:-2624:1:5 2560:1:5 3072:1:4 2624:1:5}
RUNS=${RUNS:-5}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
targets="opkit_lz4_bench $([ "${TESTS:-1}" = 1 ] && echo opkit_gpu_tests) $([ "${AEAD:-0}" = 1 ] && echo opkit_cipher_bench)"
timeout 200 bash -c "cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && \
  cmake --build --preset release -j $(nproc) --target $targets" >"$L/build.txt" 2>&1
echo "build $? $(at)"
source "$(dirname "$0")/lz4_corpora.sh"
ls -l $C
echo "corpora $(at)"
if ls .whl/*nvcomp*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl >"$L/pip.txt" 2>&1
  PYTHONPATH=/tmp/site timeout 120 python3 bench/python/lz4_nvcomp.py --chunk 65536 --runs "$RUNS" $FILES 2>&1 | tee "$L/nvcomp.txt"
  echo "nvcomp $(at)"
fi
for c in $CASES; do
  IFS=: read -r entries blocks hash <<<"$c"
  timeout 90 $B/bench/opkit_lz4_bench --block 4 --runs "$RUNS" --kernels-only --table-entries "$entries" \
    --blocks-per-cta "${blocks:-1}" --hash-bytes "${hash:-4}" $FILES 2>&1 | grep -E ' ratio |rror|wrong'
  echo "case $c done $(at)"
done
# Decoder versions on the same blocks, after the landed one (DECODERS: --decoder-variant values;
# by default the decoder before the parse split, while bench/variants keeps it, and the landed one
# with 1 and 4 byte-spread steps' loads ahead of their stores instead of 2; DECODERS= for none).
DECODERS=${DECODERS-$(ls bench/variants/lz4_decompress_*.cu 2>/dev/null | sed 's/^/file=/') LZ4K_LANE_STEPS=1u LZ4K_LANE_STEPS=4u}
if [ -n "$DECODERS" ]; then
  timeout 150 $B/bench/opkit_lz4_bench --block 4 --runs "$RUNS" --kernels-only \
    $(for v in $DECODERS; do printf -- '--decoder-variant %s ' "$v"; done) $FILES 2>&1 | grep -E ' ratio |rror|wrong'
  echo "decoders done $(at)"
fi
pack
if [ "${TESTS:-1}" = 1 ]; then
  timeout 120 $B/tests/opkit_gpu_tests --gtest_filter='Lz4*' --gtest_brief=1 >"$L/gpu_tests.txt" 2>&1
  echo "Lz4 GPU tests: exit $? $(at): $(summary "$L/gpu_tests.txt")"
  grep -h -B2 -A8 "Failure" "$L/gpu_tests.txt" | head -20
  for tool in memcheck $([ "${RACECHECK:-1}" = 1 ] && echo racecheck); do
    timeout 120 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 99 \
      $B/tests/opkit_gpu_tests --gtest_filter='Lz4Gpu.CompressorBlocks*' --gtest_brief=1 >"$L/$tool.txt" 2>&1
    echo "$tool compressor: exit $? $(at): $(summary "$L/$tool.txt")"
  done
  pack
fi
# The public API on device buffers with the defaults (and the kernels at 8192 entries, the host engine).
[ "${API:-1}" = 1 ] && timeout 150 $B/bench/opkit_lz4_bench --block 4 --runs 3 $FILES >"$L/api.txt" 2>&1
echo "API bench: exit $? $(at)"
grep -E ' ratio |rror|wrong|time goes' "$L/api.txt" 2>/dev/null
pack
if [ "${AEAD:-0}" = 1 ]; then
  timeout 90 $B/bench/opkit_cipher_bench --ciphers chacha20-poly1305 --reps 5 >"$L/cipher.txt" 2>&1
  echo "cipher bench: exit $? $(at)"
  grep -E "ROW|rror" "$L/cipher.txt"
  pack
fi
echo "total $(at)"
