#!/usr/bin/env bash
# On the GPU machine (H200): build; run the SHA-256 unit, GPU and CLI tests; benchmark every kernel
# variant with the SM clock sampled during the run (each GPU case is checked against the CPU path);
# count SASS instructions per pipe and register-bank read cycles for every benchmarked kernel and
# set the measured rate against the ALU-pipe limit and the bank model (tools/sass_banks.py); profile
# two kernels with Nsight Compute if it is installed; then openssl speed and `opkit hash --lines` on
# 10^7 lines (SHA256_EXTRAS=0 skips these). hashcat runs beside it from all.sh: HASHCAT=1400.
# Everything goes to $OUT; $OUT/sha256_summary.txt has the headlines, best variant first.
# Run from the repository root:  OUT=/some/dir bash bench/device/sha256.sh   (about 4 minutes)
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
log() { echo "== $*" | tee -a "$OUT/sha256_summary.txt"; }

log "build"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 2>&1 | tail -3

log "tests"
$B/tests/opkit_unit_tests --gtest_filter='Sha256*' --gtest_brief=1 >"$OUT/sha256_unit.txt" 2>&1
tail -3 "$OUT/sha256_unit.txt" | tee -a "$OUT/sha256_summary.txt"
OPKIT_TEST_DEVICES=cuda $B/tests/opkit_conformance_tests --gtest_filter='On/Sha256.*' --gtest_brief=1 \
  >"$OUT/sha256_gpu_tests.txt" 2>&1
tail -3 "$OUT/sha256_gpu_tests.txt" | tee -a "$OUT/sha256_summary.txt"
bash tests/cli/test_hash.sh "$B/tools/opkit/opkit" >"$OUT/sha256_cli.txt" 2>&1
tail -2 "$OUT/sha256_cli.txt" | tee -a "$OUT/sha256_summary.txt"

log "benchmark: kernel variants (SM clock sampled every 100 ms)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,utilization.gpu,power.draw,temperature.gpu --format=csv,noheader,nounits \
  -lms 100 >"$OUT/sha256_clocks.csv" 2>/dev/null &
smi=$!
rm -rf "$OUT/cubins" && mkdir -p "$OUT/cubins"
$B/bench/opkit_sha256_bench --cubins "$OUT/cubins" | tee "$OUT/sha256_bench.txt"
echo "bench exit status: ${PIPESTATUS[0]} (1: a GPU case computed a wrong digest)" | tee -a "$OUT/sha256_summary.txt"
kill $smi 2>/dev/null
# The clock under load: the median SM clock of samples with the GPU busy (utilization >= 90%).
clock_mhz=$(awk -F', *' '$3 >= 90 {print $1}' "$OUT/sha256_clocks.csv" | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 1980)}')
echo "SM clock under load (median): $clock_mhz MHz" | tee -a "$OUT/sha256_summary.txt"

log "SASS per hash (ALU, FMA slots, bank read cycles), measured rate vs the ALU-pipe limit and the bank model"
python3 - "$OUT/cubins" "$OUT/sha256_bench.txt" "$clock_mhz" <<'PY' | tee "$OUT/sha256_sass.txt" | tee -a "$OUT/sha256_summary.txt"
import json, pathlib, re, subprocess, sys
cubins, bench, clock = pathlib.Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]) / 1000
measured, wrong = {}, []
for line in open(bench):
    f = line.split()
    if len(f) == 10 and f[0] == "gpu":
        name = f"{f[1]}_L{f[2]}_b{f[3]}_pt{f[4]}_{f[5]}"
        measured[name] = float(f[7])
        if f[9] != "ok":
            wrong.append(name)
def per_hash(report, trips):
    # The static count of a loop body runs once per iteration: add the other iterations.
    totals = {k: report[k] for k in ("alu_per_hash", "fma_per_hash", "issue_per_hash", "bank_cycles_per_hash")}
    if report["loops"] and trips > 1:
        for k in totals:
            totals[k] += report["loops"][0][k] * (trips - 1)
    return totals
rows = []
for cubin in sorted(cubins.glob("*.cubin")):
    name = cubin.stem
    per = int(re.search(r"_pt(\d+)_", name).group(1))
    length = int(re.search(r"_L(\d+)_", name).group(1))
    k = json.loads(subprocess.run([sys.executable, "tools/sass_banks.py", str(cubin), "--json", "--per", str(per)],
                                  capture_output=True, text=True, check=True).stdout)["sha256_fixed"]
    t = per_hash(k, length // 64 - 1)  # the loop covers the whole blocks after the first
    alu, fma, issue, bank = t["alu_per_hash"], t["fma_per_hash"], t["issue_per_hash"], t["bank_cycles_per_hash"]
    alu_limit = 132 * 64 * clock / alu
    bound = max(2 * alu, 2 * fma, bank, issue)
    model = 132 * 128 * clock / bound
    limiter = ["alu", "fma", "bank", "issue"][[2 * alu, 2 * fma, bank, issue].index(bound)]
    rows.append((name, alu, fma, bank, issue, alu_limit, model, limiter, measured.get(name, float("nan"))))
print(f"{'kernel (GH/s at ' + format(clock, '.3f') + ' GHz)':36s} {'ALU/h':>6s} {'FMA/h':>6s} {'bank/h':>6s} "
      f"{'iss/h':>6s} {'ALUlim':>7s} {'model':>6s} {'by':>5s} {'meas':>6s} {'/ALUlim':>7s} {'/model':>6s}")
for name, alu, fma, bank, issue, alu_limit, model, limiter, got in sorted(rows, key=lambda r: -r[8] if r[8] == r[8] else 0):
    print(f"{name:36s} {alu:6.0f} {fma:6.0f} {bank:6.0f} {issue:6.0f} {alu_limit:7.2f} {model:6.2f} {limiter:>5s} "
          f"{got:6.2f} {got / alu_limit:7.1%} {got / model:6.1%}")
best = max((r for r in rows if re.match(r"sha256_L32_", r[0]) and r[0] not in wrong and r[8] == r[8]),
           key=lambda r: r[8], default=None)
if best:
    print(f"fastest sha256 L=32: {best[0]} at {best[8]:.2f} GH/s")
print("wrong digests: " + (", ".join(wrong) if wrong else "none"))
PY
python3 tools/sass_count.py "$OUT/cubins/sha256_L32_b256_pt1_default.cubin" >"$OUT/sha256_sass_L32_detail.txt" 2>&1

if [ "${SHA256_NCU:-1}" != 0 ] && command -v ncu >/dev/null 2>&1; then
  log "Nsight Compute: pipe use, occupancy and stall reasons (sha256, 32 bytes): ${SHA256_NCU_VARIANTS:-default plain}"
  for v in ${SHA256_NCU_VARIANTS:-default plain}; do
    run=("$B/bench/opkit_sha256_bench" --quick --no-cpu --only "sha256_L32_b256_pt1_$v")
    ncu_args=(--target-processes all -k sha256_fixed --launch-skip 1 --launch-count 1)
    # Sections and raw metrics apart: a metric this ncu does not know fails only its own run.
    timeout 120 ncu "${ncu_args[@]}" --section ComputeWorkloadAnalysis --section SchedulerStats \
      --section WarpStateStats --section Occupancy "${run[@]}" >"$OUT/sha256_ncu_$v.txt" 2>&1
    timeout 120 ncu "${ncu_args[@]}" --metrics \
      sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_fmaheavy.sum,sm__inst_executed_pipe_fma.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg \
      "${run[@]}" >>"$OUT/sha256_ncu_$v.txt" 2>&1
    grep -E "pipe_|issue_active|warps_active|inst_executed|cycles_elapsed|Stall|stall|Issue Slot|No Eligible|Active Warps|Eligible Warps|Achieved Occupancy|==ERROR==" \
      "$OUT/sha256_ncu_$v.txt" | head -60 | sed "s/^/$v: /" | tee -a "$OUT/sha256_summary.txt"
  done
else
  log "Nsight Compute (ncu) not installed: no profile"
fi

[ "${SHA256_EXTRAS:-1}" = 0 ] && exit 0

log "openssl speed -evp sha256 -multi $(nproc)"
openssl speed -evp sha256 -multi "$(nproc)" -seconds 2 2>/dev/null | tail -3 | tee "$OUT/openssl_speed.txt" | tee -a "$OUT/sha256_summary.txt"

log "opkit hash --lines on 10^7 lines, file to file"
lines=/tmp/opkit_lines.txt
seq 1 10000000 | awk '{ printf "%d-%x opkit line %s\n", $1, ($1 * 2654435761) % 4294967296, substr("abcdefghijklmnopqrstuvwxyz", 1, $1 % 27) }' >"$lines"
ls -l "$lines" | tee -a "$OUT/sha256_summary.txt"
for dev in cuda cpu; do
  for run in 1 2; do  # run 1 includes the kernel compile (or the cache load); run 2 is warm
    /usr/bin/time -f "wall %e s, max RSS %M KiB" "$B/tools/opkit/opkit" hash --lines --device $dev --timing "$lines" \
      >"/tmp/opkit_lines_$dev.out" 2>"$OUT/sha256_lines_${dev}_$run.txt"
    echo "$dev run $run: $(tr '\n' ' ' <"$OUT/sha256_lines_${dev}_$run.txt")" | tee -a "$OUT/sha256_summary.txt"
  done
done
cmp -s /tmp/opkit_lines_cuda.out /tmp/opkit_lines_cpu.out && echo "GPU and CPU digests identical" | tee -a "$OUT/sha256_summary.txt"
head -1000 "$lines" | while IFS= read -r l; do printf '%s' "$l" | sha256sum | cut -c1-64; done >/tmp/opkit_lines_ref.txt
head -1000 /tmp/opkit_lines_cuda.out | cmp -s - /tmp/opkit_lines_ref.txt && echo "first 1000 digests match sha256sum" | tee -a "$OUT/sha256_summary.txt"
rm -f "$lines" /tmp/opkit_lines_*.out
