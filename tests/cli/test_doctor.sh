#!/usr/bin/env bash
# End-to-end test of `opkit doctor`: its lines and exit status on this machine (without a GPU it
# must say so and why, and still exit 0 when the CPU backend works), --json, --require-gpu, and
# faults injected one per process: OPKIT_NVRTC pointing at a missing file, at an executable and at
# a library that is not NVRTC; cache directories that cannot be used; OPKIT_CACHE=0.
# Usage: test_doctor.sh /path/to/opkit
set -u
OPKIT=$(realpath "${1:?usage: test_doctor.sh /path/to/opkit}")
WORK=$(mktemp -d)
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
export OPKIT_CACHE_DIR="$WORK/cache"
cd "$WORK"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# doctor OUTFILE [env assignments...] -- [doctor args...]: runs doctor, returns its exit status.
doctor() {
  local out=$1
  shift
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$OPKIT" doctor "$@" >"$out" 2>&1
}
# line OUTFILE STATUS NAME: the check's line ("ok    nvrtc   ...") exists.
expect_line() { grep -q -E "^$2 +$3 " "$1" || fail "$1: no '$2 $3' line:"$'\n'"$(cat "$1")"; }
expect_text() { grep -q -F -- "$2" "$1" || fail "$1: lacks [$2]:"$'\n'"$(cat "$1")"; }

"$OPKIT" devices >devices.txt 2>&1
has_gpu=0 has_cpu=0
grep -q '^cuda:0 ' devices.txt && has_gpu=1
grep -q '^cpu:0 ' devices.txt && has_cpu=1
works=$((has_gpu || has_cpu))
expected_status=$((works ? 0 : 1))

# The plain run: every check named, a verdict, exit 0 when some backend works.
doctor plain.txt -- 
status=$?
[ "$status" == "$expected_status" ] || fail "doctor exited $status, expected $expected_status:"$'\n'"$(cat plain.txt)"
for name in driver nvrtc "driver vs nvrtc" "cuda installs" headers cache "cpu backend"; do
  grep -q -E "^(ok|warn|fail|skip) +$name " plain.txt || fail "no '$name' check:"$'\n'"$(cat plain.txt)"
done
grep -q -E '^(ready|not ready): ' plain.txt || fail "no verdict line"
# Every warn/fail line is followed by its cause and its fix.
awk '/^(warn|fail) /{want=2; next} want==2{if ($0 !~ /cause: /) bad=1; want=1; next} want==1{if ($0 !~ /fix: /) bad=1; want=0}
     END{exit bad}' plain.txt || fail "a warn/fail check lacks its cause or fix:"$'\n'"$(cat plain.txt)"
if [ $has_gpu == 1 ]; then
  expect_line plain.txt ok "gpu0"
  expect_line plain.txt ok "smoke cuda:0"
  expect_line plain.txt ok "driver"
  doctor gpu.txt -- --require-gpu || fail "--require-gpu failed with a GPU present:"$'\n'"$(cat gpu.txt)"
else
  # No GPU: say so and why, and still exit 0 if the CPU works.
  expect_line plain.txt skip "gpu"
  expect_text plain.txt "no CUDA GPU"
  grep -q -E '^(warn|ok) +driver ' plain.txt || fail "no driver line"
  doctor gpu.txt -- --require-gpu
  [ $? == 1 ] || fail "--require-gpu without a GPU must exit 1"
  expect_line gpu.txt fail "gpu"
  expect_text gpu.txt "--require-gpu"
fi
[ $has_cpu == 1 ] && expect_line plain.txt ok "smoke cpu"

# --json: one object, the same checks, the same verdict.
doctor doctor.json -- --json --no-smoke
json_status=$?
if command -v python3 >/dev/null; then
  python3 - doctor.json "$json_status" <<'EOF' || fail "--json is wrong:"$'\n'"$(cat doctor.json)"
import json, sys
d = json.load(open(sys.argv[1]))
names = [c["name"] for c in d["checks"]]
for n in ["driver", "nvrtc", "driver vs nvrtc", "cuda installs", "headers", "cache", "cpu backend"]:
    assert n in names, (n, names)
for c in d["checks"]:
    assert c["status"] in ("ok", "warn", "fail", "skip"), c
    assert c["detail"], c
    if c["status"] in ("warn", "fail"):
        assert c["cause"] and c["fix"], c
assert d["exit_code"] == int(sys.argv[2]), (d["exit_code"], sys.argv[2])
nvrtc = next(c for c in d["checks"] if c["name"] == "nvrtc")
if nvrtc["status"] == "ok":
    assert nvrtc["facts"]["path"] and nvrtc["facts"]["version"], nvrtc
EOF
fi

# Faults, each in a fresh process (NVRTC and the cache are set up once per process).
doctor missing.txt OPKIT_NVRTC="$WORK/no/libnvrtc.so.13" -- --no-smoke
status=$?
expect_line missing.txt fail "nvrtc"
expect_text missing.txt "OPKIT_NVRTC=$WORK/no/libnvrtc.so.13 cannot be loaded"
expect_text missing.txt "unset OPKIT_NVRTC"
expect_line missing.txt skip "headers"
# NVRTC is for GPU code; the CPU backend does not need it.
if [ $has_gpu == 0 ]; then [ $status == $expected_status ] || fail "a missing NVRTC changed the exit status without a GPU"; fi

doctor executable.txt OPKIT_NVRTC=/bin/ls -- --no-smoke
expect_line executable.txt fail "nvrtc"
expect_text executable.txt "OPKIT_NVRTC=/bin/ls cannot be loaded"

libc=$(ldd /bin/ls 2>/dev/null | awk '/libc\.so/{print $3}')
if [ -n "$libc" ] && [ -e "$libc" ]; then
  doctor notnvrtc.txt OPKIT_NVRTC="$libc" -- --no-smoke
  expect_line notnvrtc.txt fail "nvrtc"
  expect_text notnvrtc.txt "is not a usable NVRTC"
  expect_text notnvrtc.txt "nvrtcCompileProgram"
fi

: >not-a-dir
doctor uncreatable.txt OPKIT_CACHE_DIR="$WORK/not-a-dir/cache" -- --no-smoke
expect_line uncreatable.txt warn "cache"
expect_text uncreatable.txt "cannot create $WORK/not-a-dir/cache"
expect_text uncreatable.txt "set OPKIT_CACHE_DIR"

mkdir -m 777 open-dir
doctor open.txt OPKIT_CACHE_DIR="$WORK/open-dir" -- --no-smoke
expect_line open.txt warn "cache"
expect_text open.txt "writable by others"

if [ "$(id -u)" != 0 ]; then
  # Root writes anywhere; for others, a read-only directory is an unwritable cache.
  mkdir -m 500 readonly-dir
  doctor readonly.txt OPKIT_CACHE_DIR="$WORK/readonly-dir" -- --no-smoke
  expect_line readonly.txt warn "cache"
  expect_text readonly.txt "not writable"
fi

doctor off.txt OPKIT_CACHE=0 -- --no-smoke
expect_line off.txt skip "cache"
expect_text off.txt "disabled by OPKIT_CACHE=0"

[ $failures -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ok: opkit doctor (gpu=$has_gpu cpu=$has_cpu)"
