#!/usr/bin/env bash
# On the GPU machine: why the bulk cipher kernels run below their ALU-pipe limit. Nsight Compute
# on one launch each of chacha20_xor, chacha20_poly1305_main, aes_ctr_masked and aes_ghash (issue
# slots, stall reasons, pipe use, occupancy, registers), then chacha20_xor's CHACHA20_SCHEDULE
# variants timed side by side (opkit_cipher_bench --chacha20-schedules, 1 GiB, median of 7).
# Clocks are left alone (--clock-control none). Run from the repository root:
#   OUT=/some/dir bash bench/device/profile_cipher.sh
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null &&
  cmake --build --preset release -j "$(nproc)" --target opkit_cipher_bench 2>&1 | tail -1 || exit 3
bench=$B/bench/opkit_cipher_bench
sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats --section WarpStateStats --section Occupancy --section LaunchStats"
# The first launch of each kernel is the benchmark's warm-up: profile the second.
for kernel in chacha20_xor chacha20_poly1305_main aes_ctr_masked aes_ghash; do
  ncu --clock-control none $sections -k "regex:^${kernel}\$" -s 1 -c 1 \
    $bench --bytes 268435456 --reps 1 --batch 1000 >"$OUT/ncu_$kernel.txt" 2>&1
  echo "== $kernel"
  grep -E "Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Issued Ipc Active|No Eligible|Eligible Warps Per Scheduler|Warp Cycles Per Issued|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Block Limit Registers" \
    "$OUT/ncu_$kernel.txt" | head -20
  grep -iE "stall|pipe" "$OUT/ncu_$kernel.txt" | grep -vE "^ *-+$" | head -12
done
echo "== chacha20_xor schedules (chacha20_bulk.cu CHACHA20_SCHEDULE)"
$bench --chacha20-schedules 0,1,0,1 | tee "$OUT/chacha20_schedules.txt"
