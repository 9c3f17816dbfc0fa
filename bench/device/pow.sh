#!/usr/bin/env bash
# On the GPU machine (H200): build; run the proof-of-work unit, GPU and CLI tests; `opkit mine` on
# the GPU (genesis header over the whole 32-bit range, twice: the second finds the job's kernel in the cache; data mode); the
# benchmark with the SM clock sampled; SASS instructions per nonce by pipe for every kernel
# variant, with each measured rate as a fraction of its ALU-pipe limit at the measured clock; and
# hashcat mode 21400 in the same run when .anchor (../shared/tools/hashcat-anchor fetch) is carried.
# Run from the repository root:  OUT=/some/dir bash bench/device/pow.sh
# Shorter runs: POW_UNIT=0 / POW_CLI=0 skip the unit / CLI tests, POW_GPU_FILTER picks the GPU tests
# (gtest filter, default PowGpu*), POW_SASS=0 skips the SASS table (tools/sass_pipes.py can make it
# on any machine with cuobjdump: opkit_pow_bench --cubins needs no GPU).
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
B=build/release
log() { echo "== $*" | tee -a "$OUT/pow_summary.txt"; }
# Seconds since a `date +%s%N` reading, two decimals: the wall time of the command between.
seconds_since() { awk -v ns=$(($(date +%s%N) - $1)) 'BEGIN {printf "%.2f", ns / 1e9}'; }

log "build"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 2>&1 | tail -3

log "tests"
if [ "${POW_UNIT:-1}" != 0 ]; then
  $B/tests/opkit_unit_tests --gtest_filter='Pow*' --gtest_brief=1 >"$OUT/pow_unit.txt" 2>&1
  tail -3 "$OUT/pow_unit.txt" | tee -a "$OUT/pow_summary.txt"
fi
OPKIT_TEST_DEVICES=cuda $B/tests/opkit_conformance_tests --gtest_filter="${POW_GPU_FILTER:-On/Mine.*}" --gtest_brief=1 \
  >"$OUT/pow_gpu_tests.txt" 2>&1
echo "GPU tests (${POW_GPU_FILTER:-On/Mine.*}): exit $?" | tee -a "$OUT/pow_summary.txt"
tail -3 "$OUT/pow_gpu_tests.txt" | tee -a "$OUT/pow_summary.txt"
if [ "${POW_CLI:-1}" != 0 ]; then
  bash tests/cli/test_mine.sh "$B/tools/opkit/opkit" >"$OUT/pow_cli.txt" 2>&1
  tail -2 "$OUT/pow_cli.txt" | tee -a "$OUT/pow_summary.txt"
fi

log "opkit mine on the GPU (wall seconds first)"
genesis=$(awk -F'\t' '$1 == 0 {print $2}' tests/data/bitcoin-headers.tsv)
for run in first second; do
  start=$(date +%s%N)
  $B/tools/opkit/opkit mine --device cuda --quiet --json --header "$genesis" >"$OUT/pow_mine_$run.json"
  rc=$?
  wall=$(seconds_since "$start")
  echo "genesis, whole 32-bit range, $run: exit $rc, $wall s wall: $(cat "$OUT/pow_mine_$run.json")" |
    tee -a "$OUT/pow_summary.txt"
done
# The whole 2^32 range with an unreachable target (top word zero): each nonce hashed once, so
# `hashes` must be exactly 2^32 (it was ~5.04e9 when a false candidate made the host search the
# rest of a launch again), and the wall time should be the search time plus well under a second
# (the generic kernel, no per-job compile).
start=$(date +%s%N)
$B/tools/opkit/opkit mine --device cuda --quiet --json --header "$genesis" \
  --target 0000000000000000000000000000000000000000000000000000000000000001 >"$OUT/pow_mine_whole.json"
rc=$?
wall=$(seconds_since "$start")
python3 - "$OUT/pow_mine_whole.json" "$wall" "$rc" <<'PY' | tee -a "$OUT/pow_summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["hashes"] == 2**32 and r["rehashes"] == 0 and not r["found"] and sys.argv[3] == "1"
print(f"whole range, unreachable target: exit {sys.argv[3]}, hashes {r['hashes']} (2^32: {r['hashes'] == 2**32}), "
      f"rehashes {r['rehashes']}, search {r['seconds']:.3f} s, wall {sys.argv[2]} s, "
      f"{r['hashrate'] / 1e9:.2f} GH/s of nonces searched: {'PASS' if ok else 'FAIL'}")
PY
# What a process costs before and after any search (CUDA start-up, the kernel from the disk
# cache, exit): the wall time of a one-nonce search, to set against the whole range's wall time.
start=$(date +%s%N)
$B/tools/opkit/opkit mine --device cuda --quiet --json --header "$genesis" --start 0 --count 1 >/dev/null
rc=$?
wall=$(seconds_since "$start")
echo "one-nonce search (the process's fixed cost): exit $rc, $wall s wall" | tee -a "$OUT/pow_summary.txt"
# A stream of headers: block 100000 as a Stratum job, extranonce2 rolled (one new header per
# value, each searched over its whole 2^32 range), for POW_STREAM_S seconds (default 27: about 50
# headers at 8 GH/s). Nonces searched per second over the whole stream, header changes included.
stream_s=${POW_STREAM_S:-27}
start=$(date +%s%N)
$B/tools/opkit/opkit mine --device cuda --quiet --json --job tests/data/stratum-block-100000.json \
  --seconds "$stream_s" >"$OUT/pow_mine_stream.jsonl"
rc=$?
wall=$(seconds_since "$start")
python3 - "$OUT/pow_mine_stream.jsonl" "$wall" "$rc" <<'PY' | tee -a "$OUT/pow_summary.txt"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
headers = sum(e.get("event") == "header" for e in events)
shares = sum(e.get("event") == "share" for e in events)
done = [e for e in events if e.get("event") == "done"]
if not done:
    print(f"header stream: no 'done' event (exit {sys.argv[3]})")
else:
    d = done[-1]
    print(f"header stream (extranonce2 rolling, block 100000 job): exit {sys.argv[3]}, {headers} headers started, "
          f"{shares} shares, {d['hashes']} nonces in {d['seconds']:.2f} s search / {sys.argv[2]} s wall: "
          f"{d['hashes'] / d['seconds'] / 1e9:.2f} GH/s searched, {d['hashes'] / float(sys.argv[2]) / 1e9:.2f} GH/s over the wall time, "
          f"{float(sys.argv[2]) / max(headers - 1, 1):.3f} s wall per header")
PY
# Data mode, two new jobs: the first may compile the generic data kernel (cold disk cache); the
# second mines with it at once while its own kernel compiles (GH/s from the start, not the host's
# ~0.2 GH/s).
for text in "hello opkit" "hello opkit $(date +%s%N)"; do
  start=$(date +%s%N)
  $B/tools/opkit/opkit mine --device cuda --quiet --json --data "$text" --difficulty 34 >"$OUT/pow_mine_data.json"
  rc=$?
  wall=$(seconds_since "$start")
  echo "data \"$text\", difficulty 34: exit $rc, $wall s wall: $(cat "$OUT/pow_mine_data.json")" |
    tee -a "$OUT/pow_summary.txt"
done

log "benchmark (SM clock sampled every 100 ms)"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,utilization.gpu,power.draw,temperature.gpu --format=csv,noheader,nounits \
  -lms 100 >"$OUT/pow_clocks.csv" 2>/dev/null &
smi=$!
$B/bench/opkit_pow_bench | tee "$OUT/pow_bench.txt"
kill $smi 2>/dev/null
clock_mhz=$(awk -F', *' '$3 >= 90 {print $1}' "$OUT/pow_clocks.csv" | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 1980)}')
power=$(awk -F', *' '$3 >= 90 {print $4}' "$OUT/pow_clocks.csv" | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}')
echo "SM clock under load (median): $clock_mhz MHz, power $power W" | tee -a "$OUT/pow_summary.txt"

if [ "${POW_SASS:-1}" = 0 ]; then
  log "SASS table skipped (POW_SASS=0)"
else
log "SASS per nonce by pipe (limits at the measured clock), and measured / ALU-pipe limit"
$B/bench/opkit_pow_bench --cubins "$OUT/cubins" >/dev/null
sms=$($B/tools/opkit/opkit devices --json |
  python3 -c "import json, sys; print([d['compute_units'] for d in json.load(sys.stdin)['devices'] if d['backend'] == 'cuda'][0])")
python3 tools/sass_pipes.py "$OUT"/cubins/*.cubin --sms "${sms:-132}" --clock-ghz "$(awk -v m="$clock_mhz" 'BEGIN {print m / 1000}')" |
  tee "$OUT/pow_sass.md" | tee -a "$OUT/pow_summary.txt"
python3 - "$OUT/pow_sass.md" "$OUT/pow_bench.txt" <<'PY' | tee -a "$OUT/pow_summary.txt"
import re, sys
sass = {}
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.split("|")[1:-1]]
    if len(cells) > 7 and cells[0].endswith(("pow_bitcoin", "pow_data")):
        sass[cells[0].split(".cubin")[0]] = float(cells[7].split()[0])  # ALU-pipe bound, GH/s
# Benchmark row -> the cubin holding its code (launch-only variants share the default's code).
names = {"generic kernel": "bitcoin_generic", "(default": "bitcoin_default", "every addition as IMAD": "bitcoin_const_fma",
         "40 regs (6 blocks": "bitcoin_default", "256 nonces/thread": "bitcoin_default",
         "20-byte STRING": "data_20_bytes", "100-byte STRING": "data_100_bytes",
         "generic data kernel": "data_generic"}
for line in open(sys.argv[2]):
    m = re.match(r"\| (.+?) \| ([0-9.]+) (GH|MH)/s \|$", line.strip())
    if not m:
        continue
    rate = float(m.group(2)) / (1000 if m.group(3) == "MH" else 1)
    for key, cubin in names.items():
        if key in m.group(1) and cubin in sass:
            print(f"{m.group(1)}: {rate:.2f} GH/s = {100 * rate / sass[cubin]:.1f}% of its ALU-pipe limit "
                  f"{sass[cubin]:.2f} GH/s")
            break
PY
fi

if [ -d .anchor ]; then
  log "hashcat, same GPU, same run"
  bash .anchor/hashcat-anchor run "$PWD/.anchor" 21400 2>&1 | tee "$OUT/pow_hashcat.txt" | tee -a "$OUT/pow_summary.txt"
fi
