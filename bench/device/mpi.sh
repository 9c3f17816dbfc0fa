#!/usr/bin/env bash
# On the GPU machine (H200, OpenMPI): the MPI scale-out of `opkit mine` and `opkit hash --lines`.
#  1. the MPI CLI tests (CPU ranks) and, on the GPU, `mpirun -np 1|2` giving the single-process answer;
#  2. overhead: the same Bitcoin-mode range (block 1 from nonce 0 to its nonce) and a data-mode
#     range, one process vs mpirun with one rank on the GPU: wall time (process start to exit)
#     and opkit's own seconds, medians of 5 (3) runs;
#  3. CPU ranks on one node: 1, 2, 4, 8, 16 ranks vs one process on all cores (data mode);
#  4. `hash --lines` on 10^6 lines: one process vs mpirun -np 1 (GPU) and -np 4 (CPU).
# Everything goes to $OUT (mpi_summary.txt first). Run from the repository root:
#   OUT=/some/dir bash bench/device/mpi.sh
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
B=build/release
opkit=$B/tools/opkit/opkit
summary=$OUT/mpi_summary.txt
log() { echo "== $*" | tee -a "$summary"; }
mpi() { mpirun --oversubscribe --bind-to none "$@"; }

log "machine"
{ mpirun --version | head -1; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } 2>&1 |
  tee -a "$summary"

log "build"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 2>&1 | tail -2
grep -E '^(OPKIT_WITH_MPI|MPI_CXX_FOUND|MPI_CXX_LIBRARIES)' $B/CMakeCache.txt | tee -a "$summary"
if ! grep -q '^OPKIT_WITH_MPI:BOOL=ON' $B/CMakeCache.txt; then
  echo "no MPI in this build (is libopenmpi-dev installed?); nothing to measure" | tee -a "$summary"
  exit 1
fi

log "tests (CPU ranks)"
for t in tests/cli/test_mpi_*.sh; do
  echo "$t: $(bash "$t" "$opkit" 2>&1 | tee "$OUT/$(basename "$t" .sh).txt" | tail -1)" | tee -a "$summary"
done

block1=$(awk -F'\t' '$1 == 1 {print $2}' tests/data/bitcoin-headers.tsv)

log "GPU: mpirun gives the single-process answer"
same_answer() {  # same_answer LABEL NP MINE-ARGS...
  local label=$1 np=$2; shift 2
  local one three
  one=$($opkit mine --quiet --json "$@" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["found"], r["nonce"], r["hash"])')
  three=$(mpi -np "$np" $opkit mine --quiet --json "$@" 2>"$OUT/mpi_same.err" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["found"], r["nonce"], r["hash"], r["devices"])')
  echo "$label, -np $np: single [$one] mpirun [$three]" | tee -a "$summary"
}
same_answer "block 1, 2^30 nonces below its nonce (cuda)" 1 --device cuda --header "$block1" --start 2000000000 --count 1073741824
same_answer "block 1, 2^30 nonces below its nonce (cuda, 2 ranks sharing the GPU)" 2 --device cuda --header "$block1" --start 2000000000 --count 1073741824
same_answer "data mode, 32 bits (cuda)" 1 --device cuda --data "hello opkit" --difficulty 32
same_answer "data mode, 32 bits (cuda + cpu on 2 ranks)" 2 --device all --data "hello opkit" --difficulty 32

log "overhead: one process vs mpirun -np 1 on the GPU (5 runs each, medians)"
runs=$OUT/mpi_runs.txt
: >"$runs"
timed() {  # timed NAME COMMAND... : one line "NAME exit wall_ms json" in $runs
  local name=$1; shift
  local start rc
  start=$(date +%s%N)
  "$@" >"$OUT/mpi_run.json" 2>>"$OUT/mpi_runs.err"
  rc=$?
  echo "$name $rc $((($(date +%s%N) - start) / 1000000)) $(tail -1 "$OUT/mpi_run.json")" >>"$runs"
}
# Bitcoin: block 1 from nonce 0 finds its nonce 2573394689 (60% of the 32-bit range), exit 0.
# Data mode: 2^35 nonces with no answer, exit 1; mpirun takes a second or two longer to end a job
# with a non-zero exit (see mpirun_np1_false), so compare opkit's own seconds there.
btc=(mine --device cuda --quiet --json --header "$block1")
data=(mine --device cuda --quiet --json --data "opkit mpi overhead" --difficulty 200 --count 34359738368)
$opkit "${btc[@]}" >/dev/null # compiles the jobs' kernels into the cache for every later run
$opkit mine --device cuda --quiet --data "opkit mpi overhead" --difficulty 200 --count 100000000 >/dev/null
for i in 1 2 3 4 5; do
  timed bitcoin_single $opkit "${btc[@]}"
  timed bitcoin_mpirun_np1 mpi -np 1 $opkit "${btc[@]}"
done
for i in 1 2 3; do
  timed data_single $opkit "${data[@]}"
  timed data_mpirun_np1 mpi -np 1 $opkit "${data[@]}"
  timed bitcoin_mpirun_np2_shared_gpu mpi -np 2 $opkit "${btc[@]}"
  timed mpirun_np1_true mpi -np 1 true
  timed mpirun_np1_false mpi -np 1 false
done

log "CPU ranks on one node (data mode, 2^30 nonces, --device host)"
cpu=(mine --device host --quiet --json --data "opkit cpu ranks" --difficulty 200 --count 1073741824)
timed cpu_single_all_cores $opkit "${cpu[@]}"
for np in 1 2 4 8 16; do timed "cpu_mpirun_np$np" mpi -np $np $opkit "${cpu[@]}"; done

python3 - "$runs" <<'PY' | tee -a "$summary"
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, rc, wall, rest = (line.rstrip("\n").split(" ", 3) + [""])[:4]
    try:
        r = json.loads(rest)
    except ValueError:
        r = {}
    rows.setdefault(name, []).append((int(rc), int(wall) / 1000, r))
print(f"{'run':34s} {'n':>2s} {'wall s':>8s} {'opkit s':>8s} {'GH/s':>8s} {'hashes':>14s}  devices")
for name, rs in rows.items():
    wall = statistics.median(w for _, w, _ in rs)
    ok = [r for _, _, r in rs if r]
    secs = statistics.median(r["seconds"] for r in ok) if ok else float("nan")
    rate = statistics.median(r["hashrate"] for r in ok) / 1e9 if ok else float("nan")
    hashes = ok[0]["hashes"] if ok else 0
    devices = "; ".join(ok[0]["devices"]) if ok else ""
    print(f"{name:34s} {len(rs):2d} {wall:8.3f} {secs:8.3f} {rate:8.3f} {hashes:14d}  {devices[:80]}")
def overhead(single, mpi):
    if single not in rows or mpi not in rows: return
    ws = statistics.median(w for _, w, _ in rows[single]); wm = statistics.median(w for _, w, _ in rows[mpi])
    ss = statistics.median(r["seconds"] for _, _, r in rows[single] if r)
    sm = statistics.median(r["seconds"] for _, _, r in rows[mpi] if r)
    print(f"overhead {mpi} vs {single}: wall +{wm - ws:.3f} s ({100 * (wm - ws) / ws:+.1f}%), "
          f"search +{sm - ss:.3f} s ({100 * (sm - ss) / ss:+.1f}%)")
overhead("bitcoin_single", "bitcoin_mpirun_np1")
overhead("data_single", "data_mpirun_np1")
for control in ("mpirun_np1_true", "mpirun_np1_false"):
    if control in rows:
        print(f"{control} (the launcher alone): {statistics.median(w for _, w, _ in rows[control]):.3f} s wall")
PY

log "hash --lines, 10^6 lines"
awk 'BEGIN { srand(3); for (i = 0; i < 1000000; i++) { n = int(rand() * 100); s = ""; for (j = 0; j < n; j++) s = s sprintf("%c", 97 + int(rand() * 26)); print s } }' >/tmp/opkit_mpi_lines.txt
lines_run() {  # lines_run LABEL DEVICE [mpi -np N]
  local label=$1 device=$2; shift 2
  local start rc
  start=$(date +%s%N)
  "$@" $opkit hash --lines --device "$device" /tmp/opkit_mpi_lines.txt >"$OUT/mpi_lines_$label.out" 2>>"$OUT/mpi_lines.err"
  rc=$?
  echo "$label: exit $rc, $((($(date +%s%N) - start) / 1000000)) ms wall, digests md5 $(md5sum <"$OUT/mpi_lines_$label.out" | cut -c1-12)" |
    tee -a "$summary"
}
lines_run single_gpu cuda
lines_run mpirun_np1_gpu cuda mpi -np 1
lines_run single_cpu cpu
lines_run mpirun_np4_cpu cpu mpi -np 4
rm -f "$OUT"/mpi_lines_*.out /tmp/opkit_mpi_lines.txt
echo "(the md5 prefixes above must all be equal)" | tee -a "$summary"
