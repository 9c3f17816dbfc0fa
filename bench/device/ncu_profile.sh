# Sourced by the profiling scripts (profile_cipher.sh, profile_lz4.sh). ncu_profile KERNEL SKIP
# COMMAND...: Nsight Compute (--set full, clocks left alone) on launch SKIP + 1 of KERNEL while
# COMMAND runs, the report in $OUT/KERNEL.ncu-rep; prints its headline metrics (occupancy, issue
# slots, eligible warps, throughputs) and tools/ncu_stalls.py's warp-stall samples by reason and
# by SASS region.
ncu_profile() {
  local kernel=$1 skip=$2
  shift 2
  timeout 240 ncu --clock-control none --set full --import-source no -k "regex:^${kernel}\$" -s "$skip" -c 1 -f \
    -o "$OUT/$kernel" "$@" >"$OUT/${kernel}_run.txt" 2>&1
  echo "== $kernel (ncu exit $?)"
  ncu -i "$OUT/$kernel.ncu-rep" --page details >"$OUT/${kernel}_details.txt" 2>&1
  grep -E "Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Eligible Warps Per Scheduler|Warp Cycles Per Issued|DRAM Throughput|Compute \(SM\) Throughput|Block Limit Registers|L1/TEX Hit Rate" \
    "$OUT/${kernel}_details.txt" | head -14
  ncu -i "$OUT/$kernel.ncu-rep" --page source --csv --print-source sass >"$OUT/${kernel}_sass.csv" 2>&1
  python3 tools/ncu_stalls.py "$OUT/${kernel}_sass.csv" --min-share 1
}
