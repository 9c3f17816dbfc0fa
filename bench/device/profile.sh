#!/usr/bin/env bash
# On the GPU machine: Nsight Compute on one launch of each operator kernel (SHA-256 batch, Bitcoin
# and data-mode mining) — issue-slot use, warp stall reasons, pipe utilisation, occupancy — to say
# why the kernels run below their ALU-pipe limit. Clocks are left alone (--clock-control none).
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats --section WarpStateStats --section Occupancy --section LaunchStats"
genesis=$(awk -F'\t' '$1 == 0 {print $2}' tests/data/bitcoin-headers.tsv)
ncu --clock-control none $sections -k regex:sha256_fixed -s 4 -c 1 $B/bench/opkit_sha256_bench --quick >"$OUT/ncu_sha256.txt" 2>&1
ncu --clock-control none $sections -k regex:pow_bitcoin -s 4 -c 1 $B/tools/opkit/opkit mine --device cuda --quiet --header "$genesis" --count 3000000000 >"$OUT/ncu_bitcoin.txt" 2>&1
for f in "$OUT"/ncu_*.txt; do
  echo "== $f"
  grep -E "Issue Slots Busy|Issued Ipc Active|Executed Ipc Active|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|Warp Cycles Per Issued|Achieved Occupancy|Registers Per Thread|Theoretical Occupancy|Block Limit Registers|stall|Stall|ALU|FMA|pipe|Pipe" "$f" | head -40
done
