#!/usr/bin/env bash
# On the GPU machine, one call from a fresh machine (~7 minutes; carry .whl and .deps): the LZ4
# compressor's table sizes and hash bytes (CASES "entries:blocks:hash", as lz4_tables.sh) beside
# nvCOMP LZ4 on the three corpora at 64 KiB blocks, the public API with the defaults, and the
# ChaCha20-Poly1305 bulk and batch rows (opkit_cipher_bench --ciphers chacha20-poly1305). The
# lean form of lz4_tables.sh for when device time is short: no GPU tests, no sanitizers.
#   OUT=/some/dir bash bench/device/compress_aead_check.sh
source "$(dirname "$0")/check_steps.sh"
CASES=${CASES:-2624:1:5 2560:1:5 3072:1:4}
RUNS=${RUNS:-3}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 240 bash -c "cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && \
  cmake --build --preset release -j $(nproc) --target opkit_lz4_bench opkit_cipher_bench" >"$L/build.txt" 2>&1
echo "build $? $(at)"
source "$(dirname "$0")/lz4_corpora.sh"
echo "corpora $(at)"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >"$L/pip.txt" 2>&1
PYTHONPATH=/tmp/site timeout 90 python3 bench/python/lz4_nvcomp.py --chunk 65536 --runs "$RUNS" $FILES 2>&1 | grep ratio
echo "nvcomp $(at)"
for c in $CASES; do
  IFS=: read -r entries blocks hash <<<"$c"
  timeout 60 $B/bench/opkit_lz4_bench --block 4 --runs "$RUNS" --kernels-only --table-entries "$entries" \
    --blocks-per-cta "${blocks:-1}" --hash-bytes "${hash:-4}" $FILES 2>&1 | grep -E ' ratio |rror|wrong'
done
echo "cases $(at)"
timeout 120 $B/bench/opkit_lz4_bench --block 4 --runs "$RUNS" $FILES >"$L/api.txt" 2>&1
echo "API bench: exit $? $(at)"
grep -E ' ratio |rror|wrong' "$L/api.txt"
pack
timeout 90 $B/bench/opkit_cipher_bench --ciphers chacha20-poly1305 --reps 5 >"$L/cipher.txt" 2>&1
echo "cipher bench: exit $? $(at)"
grep -E "ROW|rror" "$L/cipher.txt"
pack
echo "total $(at)"
