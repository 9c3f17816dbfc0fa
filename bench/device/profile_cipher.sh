#!/usr/bin/env bash
# On the GPU machine: why the bulk cipher kernels run below their ALU-pipe limit. Nsight Compute
# (--set full, clocks left alone) on the second launch of each kernel in KERNELS (default
# chacha20_xor chacha20_poly1305_main aes_ctr_masked aes_ghash) over 256 MiB: issue slots,
# occupancy, registers, then tools/ncu_stalls.py: warp-stall samples by reason and by SASS region
# (each loop, the straight-line code between). About 40 s a kernel. Run from the repository root:
#   OUT=/some/dir [KERNELS="chacha20_poly1305_main"] bash bench/device/profile_cipher.sh
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null &&
  cmake --build --preset release -j "$(nproc)" --target opkit_cipher_bench 2>&1 | tail -1 || exit 3
bench=$B/bench/opkit_cipher_bench
source "$(dirname "$0")/ncu_profile.sh"
# The first launch of each kernel is the benchmark's warm-up: profile the second.
for kernel in ${KERNELS:-chacha20_xor chacha20_poly1305_main aes_ctr_masked aes_ghash}; do
  ncu_profile "$kernel" 1 $bench --bulk-only 1 --bytes 268435456 --reps 1
done
