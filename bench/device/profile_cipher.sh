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
# The first launch of each kernel is the benchmark's warm-up: profile the second.
for kernel in ${KERNELS:-chacha20_xor chacha20_poly1305_main aes_ctr_masked aes_ghash}; do
  timeout 240 ncu --clock-control none --set full --import-source no -k "regex:^${kernel}\$" -s 1 -c 1 -f \
    -o "$OUT/$kernel" $bench --bulk-only 1 --bytes 268435456 --reps 1 >"$OUT/${kernel}_run.txt" 2>&1
  echo "== $kernel (ncu exit $?)"
  ncu -i "$OUT/$kernel.ncu-rep" --page details >"$OUT/${kernel}_details.txt" 2>&1
  grep -E "Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Eligible Warps Per Scheduler|Warp Cycles Per Issued|DRAM Throughput|Compute \(SM\) Throughput|Block Limit Registers" \
    "$OUT/${kernel}_details.txt" | head -14
  ncu -i "$OUT/$kernel.ncu-rep" --page source --csv --print-source sass >"$OUT/${kernel}_sass.csv" 2>&1
  python3 tools/ncu_stalls.py "$OUT/${kernel}_sass.csv" --min-share 1
done
