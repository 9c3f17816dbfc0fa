#!/usr/bin/env bash
# Regression tests for the hostile-user cases of the hardening issue: each case below failed
# before its fix (a crash, a hang, unbounded memory, a silent success or a misleading message).
# Usage: test_hardening.sh /path/to/opkit
set -u
OPKIT=$(realpath "${1:?usage: test_hardening.sh /path/to/opkit}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OPKIT_CACHE_DIR="$WORK/cache"
cd "$WORK"

pass=0
failures=0
check() {  # check WHAT COMMAND...: the command must succeed
  local what=$1
  shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what" >&2; failures=$((failures + 1)); fi
}
# expect STATUS PATTERN WHAT -- opkit args...: exit status and a stderr line matching PATTERN
expect() {
  local status=$1 pattern=$2 what=$3
  shift 4
  timeout 60 "$OPKIT" "$@" >out.txt 2>err.txt </dev/null
  local got=$?
  check "$what: exit $got, expected $status ($(head -c 300 err.txt))" [ "$got" = "$status" ]
  check "$what: stderr lacks [$pattern]: $(head -c 300 err.txt)" grep -q -- "$pattern" err.txt
}

echo hello >hello.txt
have_nvrtc=0
"$OPKIT" doctor --json --no-smoke 2>/dev/null | python3 -c "
import json, sys; sys.exit(0 if any(c['name'] == 'nvrtc' and c['status'] == 'ok' for c in json.load(sys.stdin)['checks']) else 1)" &&
  have_nvrtc=1

# 1. --lines memory is bounded by --batch-mib whatever the line lengths: 30 MB of empty lines in
#    1 MiB batches once took 3 GB.
peak_kib=$(python3 - "$OPKIT" <<'PY'
import resource, subprocess, sys
lines = b"\n" * 30_000_000
subprocess.run([sys.argv[1], "hash", "--lines", "--batch-mib", "1"], input=lines, stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
check "--lines of empty lines stays under 600 MB (peak ${peak_kib} KiB)" [ "${peak_kib:-99999999}" -lt 600000 ]

# 2. An endless @FILE stops at the documented 1 GiB cap instead of exhausting memory.
cat >k.cu <<'EOF'
__global__ void k(float* in, int n) {}
EOF
expect 2 "larger than the 1 GiB" "@/dev/zero" -- run k.cu --kernel k --block 4 --device cpu --arg "in:f32:@/dev/zero" --arg i32:0
expect 2 "is a directory" "@DIR" -- run k.cu --kernel k --block 4 --device cpu --arg "in:f32:@$WORK" --arg i32:0

# 4. An NVRTC path that is a FIFO is refused, not waited on.
mkfifo nvrtc.fifo
OPKIT_NVRTC=$WORK/nvrtc.fifo timeout 20 "$OPKIT" doctor --no-smoke >out.txt 2>err.txt
check "OPKIT_NVRTC=FIFO: doctor returns (exit $?, 124 is a hang)" [ "$?" != 124 ]
check "OPKIT_NVRTC=FIFO: the reason is given" grep -q "not a regular file" out.txt
OPKIT_NVRTC=$WORK/nvrtc.fifo timeout 20 "$OPKIT" compile k.cu --arch sm_90 -o k.cubin >out.txt 2>err.txt
rc=$?
check "OPKIT_NVRTC=FIFO: compile returns, a missing library (exit 3, got $rc)" [ "$rc" = 3 ]
check "OPKIT_NVRTC=FIFO: compile gives the reason" grep -q "not a regular file" err.txt

# 6. Output that cannot be written is an error, as sha256sum's "write error".
sha256sum hello.txt >hello.sums
for args in "hash hello.txt" "hash -c hello.sums" "devices" "doctor --json --no-smoke" \
  "mine --data x --difficulty 4 --device host --quiet" "run k.cu --kernel k --block 1 --arg inout:f32:1 --arg i32:0 --device cpu"; do
  # shellcheck disable=SC2086
  "$OPKIT" $args >/dev/full 2>err.txt
  rc=$?
  check "$args > /dev/full: exit $rc, expected 1" [ "$rc" = 1 ]
  check "$args > /dev/full: says write error" grep -q "write error" err.txt
done
"$OPKIT" hash hello.txt >&- 2>err.txt
check "hash with stdout closed: exit 1" [ "$?" = 1 ]

# 10 (--json). An interrupted search's JSON carries the complete resume tail: start and count
#    cover exactly the rest of the range (test_mine.sh checks the text form).
"$OPKIT" mine --device host --quiet --json --data forever --difficulty 200 --start 1000 --count 1000000000000 \
  >out.txt 2>err.txt &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
check "interrupted mine --json: exit 130 (got $rc)" [ "$rc" = 130 ]
check "interrupted mine --json: resume covers the rest of the range" python3 -c "
import json; r = json.load(open('out.txt'))
assert r['interrupted'] and r['resume']['start'] == r['searched_through'] + 1, r
assert r['resume']['start'] + r['resume']['count'] == 1000 + 10**12, r"

# 11 / 12. An empty option value is an error, not "not given"; the empty --data STRING is valid.
expect 2 "needs a value" "--start ''" -- mine --data x --difficulty 4 --start ''
expect 2 "needs a value" "--count ''" -- mine --data x --difficulty 4 --count ''
expect 2 "needs a value" "run --device ''" -- run k.cu --kernel k --device '' --arg i32:0 --arg i32:0
expect 2 "needs a value" "compile --arch ''" -- compile k.cu --arch '' -o k.cubin
"$OPKIT" mine --data '' --difficulty 4 --device cpu --quiet >out.txt 2>err.txt
check "mine --data '': exit 0 ($(head -c 200 err.txt))" [ "$?" = 0 ]
nonce=$(awk '$1 == "nonce" {print $2}' out.txt)
check "mine --data '': the nonce is right (sha256(decimal nonce) has 4 zero bits)" python3 -c "
import hashlib, sys; h = hashlib.sha256(b'$nonce').digest(); sys.exit(0 if h[0] >> 4 == 0 else 1)"

# 13. Sizes out of range and non-UTF-8 names in --json.
expect 2 "not in range" "--batch-mib -1" -- hash --lines --batch-mib -1 hello.txt
cp k.cu "$(printf 'k\377.cu')"
if "$OPKIT" doctor --json --no-smoke 2>/dev/null | grep -q '"name": "nvrtc", "status": "ok"\|"status": "ok"' &&
  "$OPKIT" compile "$(printf 'k\377.cu')" --arch sm_90 -o k.cubin --json >out.txt 2>err.txt; then
  check "compile --json of a non-UTF-8 name is valid JSON" python3 -c "import json; json.load(open('out.txt'))"
fi

# 14. Exit statuses as docs/cli.md says: a block over CUDA's limits is a launch failure (3) on the
#     CPU backend as on a GPU.
cat >t.cu <<'EOF'
__global__ void t(float* a) { a[threadIdx.x] = 1; }
EOF
expect 3 "1024 threads" "cpu: block too large" -- run t.cu --kernel t --block 2048 --arg out:f32:2048 --device cpu
# An arch this NVRTC cannot target is bad input (2), whether too new (sm_999) or too old (sm_1).
if [ "$have_nvrtc" = 1 ]; then
  expect 2 "cannot target sm_1" "compile --arch sm_1" -- compile t.cu --arch sm_1 -o t.cubin
  expect 2 "sm_999" "compile --arch sm_999" -- compile t.cu --arch sm_999 -o t.cubin
fi

# 8. A NUL byte in kernel source is refused, naming its offset, by NVRTC and the CPU backend alike
#    (NVRTC used to compile the text before it and exit 0).
printf '__global__ void a(long long*o){o[0]=1;}\n\0garbage\n' >nul.cu
if [ "$have_nvrtc" = 1 ]; then
  expect 2 "NUL byte at offset 40" "compile: NUL in source" -- compile nul.cu --arch sm_90 -o nul.cubin
fi
expect 2 "NUL byte at offset 40" "run --device cpu: NUL in source" -- run nul.cu --kernel a --block 1 --arg out:i64:1 --device cpu

# 9. Kernels in namespaces and kernels that macros define compile and run, by qualified name.
cat >ns.cu <<'EOF'
namespace ns { __global__ void in_ns(int* o) { o[threadIdx.x] = 7; } }
#define KERNEL(n) __global__ void n(int* o)
KERNEL(k1) { o[threadIdx.x] = 5; }
EOF
if [ "$have_nvrtc" = 1 ]; then
  "$OPKIT" compile ns.cu --arch sm_90 -o ns.cubin >out.txt 2>err.txt
  check "compile of namespaced and macro kernels: exit 0 ($(head -c 300 err.txt))" [ "$?" = 0 ]
  check "compile lists ns::in_ns" grep -q "ns::in_ns" out.txt
fi
"$OPKIT" run ns.cu --kernel ns::in_ns --block 2 --arg out:i32:2 --device cpu >out.txt 2>err.txt
check "run --kernel ns::in_ns on cpu ($(head -c 300 err.txt))" grep -qx "7 7" out.txt
"$OPKIT" run ns.cu --kernel k1 --block 2 --arg out:i32:2 --device cpu >out.txt 2>err.txt
check "run --kernel k1 (macro) on cpu ($(head -c 300 err.txt))" grep -qx "5 5" out.txt
expect 2 "no kernel named 'nope'" "run --kernel of an unknown name" -- run ns.cu --kernel nope --block 1 --arg out:i32:1 --device cpu

# 15. An unreadable sums file is a read error.
expect 1 "read error" "hash -c DIR" -- hash -c "$WORK"
"$OPKIT" hash -c <&- >out.txt 2>err.txt
check "hash -c with stdin closed: exit 1" [ "$?" = 1 ]
check "hash -c with stdin closed: read error" grep -q "read error" err.txt

# 16. Ctrl-C and SIGTERM stop `hash` cleanly, saying how far it got.
for signal in INT TERM; do
  mkfifo "slow.$signal"
  (printf 'a\nb\n'; sleep 30) >"slow.$signal" &
  writer=$!
  "$OPKIT" hash --lines "slow.$signal" >out.txt 2>err.txt &
  pid=$!
  sleep 1
  kill -"$signal" "$pid"
  wait "$pid"
  rc=$?
  kill "$writer" 2>/dev/null
  check "hash --lines SIG$signal: exit 130 (got $rc)" [ "$rc" = 130 ]
  check "hash --lines SIG$signal: says where it got to" grep -q "interrupted" err.txt
done

# 16 (hash FILE, hash -c, encrypt, decrypt): the same stop in the other modes of `hash` and in
#    `encrypt`/`decrypt` is tested by test_signals.sh.
printf 'abc' >abc.txt
printf '%s  slow.fifo\n' "$(sha256sum abc.txt | cut -d' ' -f1)" >slow.sums

# --device is checked in every mode of hash, though files and -c always hash on the host.
"$OPKIT" hash --device bogus abc.txt >/dev/null 2>err.txt; rc=$?
check "hash --device bogus FILE: exit 2 (got $rc)" [ "$rc" = 2 ]
check "hash --device bogus FILE: the error names the value" grep -q "'bogus'" err.txt
"$OPKIT" hash -c --device cpu:7 slow.sums >/dev/null 2>err.txt; rc=$?
check "hash -c --device cpu:7 (no such device): exit 3 (got $rc)" [ "$rc" = 3 ]
"$OPKIT" hash --device host abc.txt >out.txt && check "hash --device host FILE works" grep -q "abc.txt" out.txt

# 16 (run). Ctrl-C and SIGTERM stop `run` of a kernel that never ends: the CPU backend's workers
#    leave it, and the error says so (exit 130). It used to ignore both until killed.
cat >spin.cu <<'EOF'
__global__ void spin(unsigned long long* p) { for (;;) atomicAdd(p, 1ull); }
EOF
# A launch refused for its argument size compiles the kernel first: later runs load it at once.
"$OPKIT" run spin.cu --kernel spin --block 1 --arg i32:0 --device cpu >/dev/null 2>&1
for signal in INT TERM; do
  "$OPKIT" run spin.cu --kernel spin --grid 8 --block 32 --arg out:u64:1 --device cpu >out.txt 2>err.txt &
  pid=$!
  # The launch has begun once the CPU backend's worker threads exist (at most 60 s of loading).
  for _ in $(seq 600); do
    [ "$(ls /proc/$pid/task 2>/dev/null | wc -l)" -gt 1 ] && break
    sleep 0.1
  done
  sleep 0.5
  kill -"$signal" "$pid"
  sent=$(date +%s%N)
  (sleep 10 && kill -KILL "$pid" 2>/dev/null) &
  watchdog=$!
  wait "$pid"
  rc=$?
  took_ms=$((($(date +%s%N) - sent) / 1000000))
  kill "$watchdog" 2>/dev/null
  check "run of an endless kernel, SIG$signal: exit 130 (got $rc, $(head -c 200 err.txt))" [ "$rc" = 130 ]
  check "run of an endless kernel, SIG$signal: says it was stopped" grep -q "interrupted: the kernel was stopped" err.txt
  check "run of an endless kernel, SIG$signal: stopped within 3 s (took ${took_ms} ms)" [ "$took_ms" -lt 3000 ]
done

# valgrind on the CPU backend: the fiber stacks are registered with it (where its header was
# found at build time), so a clean kernel with barriers reports no error, while a real
# out-of-bounds write still is one. Before, every stack switch was reported.
if command -v valgrind >/dev/null 2>&1; then
  cat >vg.cu <<'EOF'
__global__ void clean(float* a) { __syncthreads(); a[threadIdx.x] = threadIdx.x; __syncthreads(); }
__global__ void oob(float* a) { __syncthreads(); a[threadIdx.x + 4] = 1; }  // just past the end
EOF
  "$OPKIT" run vg.cu --kernel clean --block 4 --arg out:f32:4 --device cpu >/dev/null 2>&1  # compile once
  timeout 300 valgrind --error-exitcode=9 "$OPKIT" run vg.cu --kernel clean --block 4 --arg out:f32:4 --device cpu \
    >out.txt 2>err.txt
  check "valgrind: a clean CPU-backend run reports no error (exit $?: $(grep -m1 -A2 'Invalid\|uninitialised' err.txt))" \
    grep -q "ERROR SUMMARY: 0 errors" err.txt
  timeout 300 valgrind --error-exitcode=9 "$OPKIT" run vg.cu --kernel oob --block 4 --arg out:f32:4 --device cpu \
    >out.txt 2>err.txt
  check "valgrind: an out-of-bounds write in a kernel is reported (exit $?)" grep -q "Invalid write of size 4" err.txt
else
  echo "skip: valgrind is not installed"
fi

# 17. Errors are for users: no source location, no doubled prefix, an unknown command named.
expect 2 "'bogus' is not an opkit command" "unknown subcommand" -- bogus
expect 2 "" "bad --algo" -- hash --check --lines hello.txt
check "errors carry no source location" bash -c "! grep -q '  at: ' err.txt"
check "errors carry no doubled prefix" bash -c "! grep -q 'opkit: opkit' err.txt"
OPKIT_VERBOSE=1 "$OPKIT" hash --check --lines hello.txt >out.txt 2>err.txt
check "OPKIT_VERBOSE=1 shows the source location" grep -q '  at: ' err.txt

# 18. The CPU backend enforces a GPU's static shared memory limit (48 KiB per kernel) as ptxas
#     does: a compile error (exit 1). 400 KB used to compile and run.
cat >big_shared.cu <<'EOF'
__global__ void k(int* o) { __shared__ char big[400000]; big[threadIdx.x] = 1; o[0] = big[0]; }
EOF
expect 1 "uses too much shared data (400000 bytes, 49152 max)" "400 KB of static shared on cpu" -- \
  run big_shared.cu --kernel k --block 1 --arg out:i32:1 --device cpu

# 19 (CPU compile folders). SIGTERM during a CPU-backend compile leaves no $TMPDIR/opkit-cpu-*
#    folder (the compile ends, then the command stops); a folder that a killed process (kill -9)
#    left is removed by the next process's compile once it is an hour old and its process gone.
mkdir -p tmp
stale=tmp/opkit-cpu-999999999-AAAAAA fresh=tmp/opkit-cpu-999999998-BBBBBB live=tmp/opkit-cpu-$$-CCCCCC
mkdir -p "$stale/sub" "$fresh" "$live"
touch -d '2 hours ago' "$stale" "$live"
printf '__global__ void spin2(unsigned long long* p) { for (;;) atomicAdd(p, 2ull); }\n' >spin2.cu
TMPDIR=$WORK/tmp "$OPKIT" run spin2.cu --kernel spin2 --block 1 --arg out:u64:1 --device cpu >out.txt 2>err.txt &
pid=$!
sleep 0.3
kill -TERM "$pid"
wait "$pid"
rc=$?
check "SIGTERM during a CPU compile or launch: exit 130 (got $rc: $(head -c 200 err.txt))" [ "$rc" = 130 ]
check "SIGTERM during a CPU compile: no compile folder of that process is left" \
  bash -c "! ls tmp | grep -q 'opkit-cpu-$pid-'"
check "a stale compile folder of a dead process is removed" [ ! -e "$stale" ]
check "a recent compile folder is kept (its process may live in another PID namespace)" [ -d "$fresh" ]
check "an old compile folder of a live process is kept" [ -d "$live" ]

# 14 / 19 (full disks). A full temporary folder fails a CPU-backend compile as an I/O error
#    (exit 3, the reason given), and `compile -o` onto a full disk leaves no file (it used to leave
#    0 bytes). Needs a small tmpfs: root and mount(8); skipped elsewhere.
mkdir -p small
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs small 2>/dev/null; then
  head -c 65536 /dev/zero >small/fill 2>/dev/null
  printf '__global__ void fresh(float* a) { a[threadIdx.x] = 3; }\n' >fresh.cu
  TMPDIR=$WORK/small OPKIT_CACHE=0 "$OPKIT" run fresh.cu --kernel fresh --block 1 --arg out:f32:1 --device cpu \
    >out.txt 2>err.txt
  rc=$?
  check "CPU compile with a full TMPDIR: exit 3 (got $rc)" [ "$rc" = 3 ]
  check "CPU compile with a full TMPDIR: says why" grep -q "No space left on device" err.txt
  if [ "$have_nvrtc" = 1 ]; then
    OPKIT_CACHE=0 "$OPKIT" compile fresh.cu --arch sm_90 -o small/fresh.cubin >out.txt 2>err.txt
    rc=$?
    check "compile -o onto a full disk: exit 3 (got $rc)" [ "$rc" = 3 ]
    check "compile -o onto a full disk: says why" grep -q "No space left on device" err.txt
    check "compile -o onto a full disk: leaves no file" bash -c "[ \"\$(ls small)\" = fill ]"
  fi
  umount small
else
  echo "skip: full-disk cases (need root and a tmpfs mount)"
fi

# 13 (memory). One line larger than memory allows is an error that says so (exit 3), not a bare
#    std::bad_alloc.
head -c 300000000 /dev/zero | tr '\0' a >huge.txt
(ulimit -v 600000 && "$OPKIT" hash --lines --device host huge.txt >/dev/null 2>err.txt)
rc=$?
check "hash --lines of a line too large for memory: exit 3 (got $rc)" [ "$rc" = 3 ]
check "hash --lines of a line too large for memory: says out of memory" grep -q "out of memory" err.txt
rm -f huge.txt

# 20. Data-mode progress (range 2^64) shows the rate, the nonces tried and the expected time to a
#    find, not "0.00% of range  ETA >1y". The progress line needs a terminal: script(1) gives one.
if command -v script >/dev/null 2>&1; then
  timeout -s INT 3 script -qc "$OPKIT mine --device host --data forever --difficulty 60" /dev/null >progress.txt 2>&1
  check "data-mode progress: nonces tried and expected time to a find" \
    grep -q "nonces tried  a find expected every" progress.txt
  check "data-mode progress: no percentage of a 2^64 range" bash -c "! grep -q '% of range' progress.txt"
fi

# 19. `compile -o` writes a temporary and renames: a failure leaves nothing behind, and a device
#     destination is written in place, never replaced.
"$OPKIT" compile k.cu --arch sm_1 -o never.cubin >out.txt 2>err.txt
check "a failed compile leaves no output file" [ ! -e never.cubin ]
check "a failed compile leaves no temporary" bash -c "! ls -a | grep -q opkit-tmp"
# A write that fails part way, without root or a small disk: a 1 KiB file-size limit (SIGXFSZ
# ignored, so the write fails with EFBIG) under a 3.7 KB cubin. Written in place, it would leave
# the first KiB; through the temporary it leaves nothing.
if [ "$have_nvrtc" = 1 ]; then
  printf '__global__ void part(float* a) { a[threadIdx.x] = 3; }\n' >part.cu
  (trap '' XFSZ; ulimit -f 1; OPKIT_CACHE=0 "$OPKIT" compile part.cu --arch sm_90 -o part.cubin >out.txt 2>err.txt)
  rc=$?
  check "compile -o cut short by a file-size limit: exit 3 (got $rc: $(head -c 200 err.txt))" [ "$rc" = 3 ]
  check "compile -o cut short by a file-size limit: says why" grep -q "cannot write part.cubin: File too large" err.txt
  check "compile -o cut short by a file-size limit: no output file" [ ! -e part.cubin ]
  check "compile -o cut short by a file-size limit: no temporary" bash -c "! ls -a | grep -q 'part.cubin.opkit-tmp'"
  OPKIT_CACHE=0 "$OPKIT" compile part.cu --arch sm_90 -o part.cubin >/dev/null 2>&1
  check "the same compile without the limit writes the cubin" [ "$(stat -c %s part.cubin 2>/dev/null || echo 0)" -gt 1024 ]
fi

# Usage errors (CLI11's parse errors) read like every other error: "opkit COMMAND: ..." and where
# the help is, exit 2.
expect 2 "^opkit encrypt: --cipher is required" "a missing required option" -- encrypt
expect 2 "^opkit mine: Could not convert: --difficulty = abc" "a bad number" -- mine --difficulty abc
expect 2 "^opkit hash: .*not expected: --bogus" "an unknown option" -- hash --bogus
expect 2 "^Run 'opkit hash --help'" "where the help is" -- hash --bogus
"$OPKIT" hash --help >out.txt 2>err.txt </dev/null
check "--help still exits 0" [ "$?" = 0 ]
check "--help prints the usage on stdout" grep -q "^Usage: " out.txt

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
