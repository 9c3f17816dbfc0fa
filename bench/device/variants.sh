#!/usr/bin/env bash
# On the GPU machine: builds of a kernel timed side by side in one call, each checked against its
# reference by the bench. The LZ4 decode kernel (opkit_lz4_bench --decoder-variant, the three
# corpora of lz4_corpora.sh, 64 KiB blocks) for each of DECODERS (space-separated; each
# NAME=VALUE[,NAME=VALUE]), and the ChaCha20-Poly1305 bulk kernels (opkit_cipher_bench
# --aead-variants, 1 GiB, encrypt and decrypt+verify) for each of AEADS (comma-separated
# NAME=VALUE or "default"; "none" for either list leaves it out). The first of each list runs
# again last (drift). SANITIZE="BUILD ...": those decoder builds also under compute-sanitizer
# memcheck and racecheck (the first 2 MiB of each corpus; ~40 s a build and tool). The defaults: the decoder's short-part bound around its
# 128 and the AEAD kernel's rolled rounds against unrolled ones. About 3 minutes without SANITIZE:
#   OUT=/some/dir bash bench/device/variants.sh
source "$(dirname "$0")/check_steps.sh"
DECODERS=${DECODERS:-LZ4K_SHORT=128 LZ4K_SHORT=64 LZ4K_SHORT=256}
AEADS=${AEADS:-default,CHACHA20_AEAD_ROUNDS_UNROLL=9,CHACHA20_AEAD_ROUNDS_UNROLL=3}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 240 bash -c "cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && \
  cmake --build --preset release -j $(nproc) --target opkit_lz4_bench opkit_cipher_bench" >"$L/build.txt" 2>&1
echo "build $? $(at)"
if [ "$DECODERS" != none ]; then
  source "$(dirname "$0")/lz4_corpora.sh"
  args=()
  for d in $DECODERS ${DECODERS%% *}; do args+=(--decoder-variant "$d"); done
  timeout 200 $B/bench/opkit_lz4_bench --block 4 --runs 5 --kernels-only "${args[@]}" $FILES >"$L/decoders.txt" 2>&1
  echo "decoders: exit $? $(at)"
  grep -E ' ratio |rror|wrong|WRONG' "$L/decoders.txt" | sed 's/ compress .* decompress/ decompress/'
  if [ -n "${SANITIZE:-}" ]; then
    for f in $FILES; do head -c $((2 << 20)) "$f" >"$L/$(basename "$f").2m"; done
    for d in $SANITIZE; do
      for tool in memcheck racecheck; do
        timeout 120 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 99 $B/bench/opkit_lz4_bench --block 4 --runs 1 \
          --kernels-only --decoder-variant "$d" "$L"/*.2m >"$L/$tool-$d.txt" 2>&1
        echo "$tool $d: exit $? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/$tool-$d.txt" | tr '\n' ' ') $(at)"
      done
    done
  fi
fi
pack
if [ "$AEADS" != none ]; then
  timeout 150 $B/bench/opkit_cipher_bench --aead-variants "$AEADS,${AEADS%%,*}" --reps 7 >"$L/aeads.txt" 2>&1
  echo "aeads: exit $? $(at)"
  grep -E "ROW|rror" "$L/aeads.txt"
fi
pack
echo "total $(at)"
