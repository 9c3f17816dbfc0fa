#!/usr/bin/env bash
# On the GPU machine: where the LZ4 kernels' warps wait. Nsight Compute (--set full, clocks left
# alone) on one launch each of lz4_decompress and lz4_compress over the mixed corpus at 64 KiB
# blocks (the corpus bench/device/lz4.sh builds, made here if missing), then tools/ncu_stalls.py:
# warp-stall samples by reason and by SASS region (each loop, the straight-line code between).
# About 3 minutes on 16 cores. Run from the repository root:
#   OUT=/some/dir bash bench/device/profile_lz4.sh [CORPUS]
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH LC_ALL=C
B=build/release
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null &&
  cmake --build --preset release -j "$(nproc)" --target opkit_lz4_bench 2>&1 | tail -1 || exit 3
corpus=${1:-/tmp/lz4_corpora/mixed.bin}
if [ ! -s "$corpus" ]; then
  mkdir -p "$(dirname "$corpus")"
  find /usr/lib /usr/share -type f -size +0 2>/dev/null | sort | xargs -d '\n' cat 2>/dev/null |
    head -c $((256 << 20)) >"$corpus"
fi
source "$(dirname "$0")/ncu_profile.sh"
for kernel in lz4_decompress lz4_compress; do
  ncu_profile "$kernel" 0 $B/bench/opkit_lz4_bench --block 4 --runs 1 --kernels-only "$corpus"
done
