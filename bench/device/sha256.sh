#!/usr/bin/env bash
# On the GPU machine (H200): build; run the SHA-256 unit, GPU and CLI tests; benchmark the kernels
# with the SM clock sampled during the run; count SASS instructions per pipe for every benchmarked
# kernel and compare the measured rate with its ALU-pipe limit; openssl speed for the CPU path;
# `opkit hash --lines` end to end on 10^7 lines, GPU and CPU. Everything goes to $OUT.
# Run from the repository root:  OUT=/some/dir bash bench/device/sha256.sh
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
$B/tests/opkit_gpu_tests --gtest_filter='Sha256*' --gtest_brief=1 >"$OUT/sha256_gpu_tests.txt" 2>&1
tail -3 "$OUT/sha256_gpu_tests.txt" | tee -a "$OUT/sha256_summary.txt"
bash tests/cli/test_hash.sh "$B/tools/opkit/opkit" >"$OUT/sha256_cli.txt" 2>&1
tail -2 "$OUT/sha256_cli.txt" | tee -a "$OUT/sha256_summary.txt"

log "benchmark (SM clock sampled every 100 ms)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,utilization.gpu,power.draw,temperature.gpu --format=csv,noheader,nounits \
  -lms 100 >"$OUT/sha256_clocks.csv" 2>/dev/null &
smi=$!
mkdir -p "$OUT/cubins"
$B/bench/opkit_sha256_bench --cubins "$OUT/cubins" | tee "$OUT/sha256_bench.txt"
kill $smi 2>/dev/null
# The clock under load: the median SM clock of samples with the GPU busy (utilization >= 90%).
clock_mhz=$(awk -F', *' '$3 >= 90 {print $1}' "$OUT/sha256_clocks.csv" | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 1980)}')
echo "SM clock under load (median): $clock_mhz MHz" | tee -a "$OUT/sha256_summary.txt"

log "SASS per pipe, and measured rate vs the ALU-pipe limit"
python3 - "$OUT/cubins" "$OUT/sha256_bench.txt" "$clock_mhz" <<'PY' | tee "$OUT/sha256_sass.txt" | tee -a "$OUT/sha256_summary.txt"
import json, pathlib, re, subprocess, sys
cubins, bench, clock = pathlib.Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]) / 1000
measured = {}
for line in open(bench):
    f = line.split()
    if len(f) == 9 and f[0] == "gpu":
        measured[f"{f[1]}_L{f[2]}_b{f[3]}_pt{f[4]}_shr{f[5]}"] = float(f[7])
print(f"{'kernel':34s} {'ALU/h':>7s} {'FMA/h':>7s} {'all/h':>7s} {'limit GH/s':>10s} {'meas GH/s':>9s} {'of limit':>8s}")
for cubin in sorted(cubins.glob("*.cubin")):
    name = cubin.stem
    per = int(re.search(r"_pt(\d+)", name).group(1))
    length = int(re.search(r"_L(\d+)", name).group(1))
    report = json.loads(subprocess.run([sys.executable, "tools/sass_count.py", str(cubin), "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    k = report["sha256_fixed"]
    def slots(p): return p.get("alu", 0), p.get("fma", 0) + 2 * p.get("fma_wide", 0), sum(p.values())
    alu, fma, total = slots(k["pipes"])
    if k["loops"]:  # the whole-block loop runs length // 64 times; its static count is one iteration
        la, lf, lt = slots(k["loops"][0]["pipes"])
        trips = length // 64
        alu, fma, total = alu + la * (trips - 1), fma + lf * (trips - 1), total + lt * (trips - 1)
    alu, fma, total = alu / per, fma / per, total / per
    limit = 132 * 64 * clock * 1e9 / alu / 1e9
    got = measured.get(name)
    print(f"{name:34s} {alu:7.0f} {fma:7.0f} {total:7.0f} {limit:10.2f} {got if got else float('nan'):9.2f} "
          f"{(got / limit if got else float('nan')):8.1%}")
PY
python3 tools/sass_count.py "$OUT/cubins/sha256_L32_b256_pt1_shrfma.cubin" >"$OUT/sha256_sass_L32_detail.txt" 2>&1

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
