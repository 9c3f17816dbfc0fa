#!/usr/bin/env bash
# End-to-end test of `opkit compile` (NVRTC, no GPU needed) and, through it, of the on-disk kernel
# cache across processes: miss then hit, OPKIT_CACHE_DIR, OPKIT_CACHE=0, a damaged entry replaced,
# a header edit recompiling, two processes compiling the same program at once.
# Usage: test_compile.sh /path/to/opkit   (exit 77: no NVRTC, unless OPKIT_REQUIRE_NVRTC=1)
set -u
OPKIT=$(realpath "${1:?usage: test_compile.sh /path/to/opkit}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OPKIT_CACHE_DIR="$WORK/cache"
cd "$WORK"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_contains() { [[ "$3" == *"$2"* ]] || fail "$1: [$2] not in: $(echo "$3" | head -c 400)"; }
# expect_error WHAT STATUS STDERR_PATTERN -- opkit args...
expect_error() {
  local what=$1 status=$2 pattern=$3
  shift 4
  "$OPKIT" "$@" >out.txt 2>err.txt
  local got=$?
  [ "$got" == "$status" ] || fail "$what: exit $got, expected $status ($(head -c 300 err.txt))"
  grep -q -- "$pattern" err.txt || fail "$what: stderr lacks [$pattern]: $(head -c 300 err.txt)"
}
bins() { find "$1" -name '*.bin' | wc -l; }
tmps() { find "$1" -name '*.tmp.*' | wc -l; }

cat >tutorial.cu <<'EOF'
__global__ void test_kernel(float *a) {
  int idx = threadIdx.x + threadIdx.y * 4;
  a[idx] = 2.0 * idx;
}
EOF

if ! "$OPKIT" compile tutorial.cu --arch sm_90 -o probe.cubin >/dev/null 2>err.txt; then
  if grep -q "NVRTC" err.txt && [ "${OPKIT_REQUIRE_NVRTC:-0}" != 1 ]; then
    echo "SKIP: no NVRTC: $(head -1 err.txt)"
    exit 77
  fi
  echo "FAIL: the tutorial kernel does not compile: $(cat err.txt)" >&2
  exit 1
fi
rm -rf "$OPKIT_CACHE_DIR" probe.cubin

# A cubin for sm_90 (an ELF file), named after the source; a miss, then a hit in a new process.
out=$("$OPKIT" compile tutorial.cu --arch sm_90) || fail "compile sm_90 failed"
expect_contains "first compile" "cache: miss" "$out"
expect_contains "first compile" "kernels: test_kernel" "$out"
[ "$(head -c 4 tutorial.cubin | od -An -c | tr -d ' ')" == '177ELF' ] || fail "tutorial.cubin is not an ELF file"
[ "$(stat -c %a "$OPKIT_CACHE_DIR")" == 700 ] || fail "cache directory mode is $(stat -c %a "$OPKIT_CACHE_DIR"), not 700"
[ "$(bins "$OPKIT_CACHE_DIR")" == 1 ] || fail "expected one entry in OPKIT_CACHE_DIR, found $(bins "$OPKIT_CACHE_DIR")"
out=$("$OPKIT" compile tutorial.cu --arch sm_90 -o again.cubin)
expect_contains "second compile" "cache: hit" "$out"
cmp -s tutorial.cubin again.cubin || fail "the cache hit returned another binary"

json=$("$OPKIT" compile tutorial.cu --arch sm_90 --json)
expect_contains "--json" '"cache":"hit"' "$json"
expect_contains "--json" '"format":"cubin"' "$json"
expect_contains "--json" '"kernels":{"test_kernel":"_Z11test_kernelPf"}' "$json"
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; json.loads(sys.argv[1])' "$json" || fail "--json is not JSON: $json"
fi

# A different arch is a different entry.
out=$("$OPKIT" compile tutorial.cu --arch sm_80 -o t80.cubin)
expect_contains "sm_80" "cache: miss" "$out"
expect_contains "sm_80" "cubin sm_80" "$out"

# PTX: by extension, or by asking for compute_XX.
"$OPKIT" compile tutorial.cu --arch sm_90 -o t.ptx >/dev/null || fail "-o t.ptx failed"
grep -q '^\.target sm_90' t.ptx || fail "t.ptx has no .target sm_90"
grep -q '\.entry _Z11test_kernelPf' t.ptx || fail "t.ptx has no entry for test_kernel"
"$OPKIT" compile tutorial.cu --arch compute_80 >/dev/null || fail "--arch compute_80 failed"
grep -q '^\.target sm_80' tutorial.ptx || fail "--arch compute_80 did not write tutorial.ptx for sm_80"
expect_error "compute_XX into .cubin" 2 "asks for PTX" -- compile tutorial.cu --arch compute_90 -o x.cubin

# Damaged entries are misses and are replaced.
rm -rf "$OPKIT_CACHE_DIR"
"$OPKIT" compile tutorial.cu --arch sm_90 >/dev/null
entry=$(find "$OPKIT_CACHE_DIR" -name '*.bin')
truncate -s 100 "$entry"
expect_contains "truncated entry" "cache: miss" "$("$OPKIT" compile tutorial.cu --arch sm_90)"
expect_contains "after repair" "cache: hit" "$("$OPKIT" compile tutorial.cu --arch sm_90)"
printf '\x00\x01\x02' | dd of="$entry" bs=1 seek=2000 conv=notrunc status=none
expect_contains "corrupted entry" "cache: miss" "$("$OPKIT" compile tutorial.cu --arch sm_90)"
expect_contains "after repair" "cache: hit" "$("$OPKIT" compile tutorial.cu --arch sm_90)"
cmp -s tutorial.cubin again.cubin || fail "the recompiled binary differs"
chmod 666 "$entry"
expect_contains "world-writable entry" "cache: miss" "$("$OPKIT" compile tutorial.cu --arch sm_90)"
[ "$(stat -c %a "$entry")" == 600 ] || fail "the replaced entry is mode $(stat -c %a "$entry"), not 600"

# OPKIT_CACHE=0: no hit, nothing written.
rm -rf "$OPKIT_CACHE_DIR"
expect_contains "OPKIT_CACHE=0" "cache: off" "$(OPKIT_CACHE=0 "$OPKIT" compile tutorial.cu --arch sm_90)"
expect_contains "OPKIT_CACHE=0" "cache: off" "$(OPKIT_CACHE=0 "$OPKIT" compile tutorial.cu --arch sm_90)"
[ ! -e "$OPKIT_CACHE_DIR" ] || fail "OPKIT_CACHE=0 still created $OPKIT_CACHE_DIR"

# A cache directory others can write to is refused: compiles work, uncached.
mkdir -m 777 shared-cache
expect_contains "world-writable dir" "cache: off" "$(OPKIT_CACHE_DIR=$WORK/shared-cache "$OPKIT" compile tutorial.cu --arch sm_90)"
[ "$(bins shared-cache)" == 0 ] || fail "an entry was written to a world-writable directory"

# Editing a header found through -I (or next to the source) recompiles.
mkdir -p src inc
printf '#include "params.cuh"\n__global__ void k(int* a) { a[0] = VALUE; }\n' >src/uses_header.cu
printf '#define VALUE 1\n' >inc/params.cuh
expect_error "missing header" 1 'cannot open source file "params.cuh"' -- compile src/uses_header.cu --arch sm_90
expect_contains "with -I" "cache: miss" "$("$OPKIT" compile src/uses_header.cu --arch sm_90 -I inc)"
expect_contains "with -I again" "cache: hit" "$("$OPKIT" compile src/uses_header.cu --arch sm_90 -I inc)"
printf '#define VALUE 2\n' >inc/params.cuh
expect_contains "header edited" "cache: miss" "$("$OPKIT" compile src/uses_header.cu --arch sm_90 -I inc)"

# -D reaches the source.
printf '#if WIDTH != 256\n#error WIDTH must be 256\n#endif\n__global__ void k(float* a) { a[0] = WIDTH; }\n' >define.cu
"$OPKIT" compile define.cu --arch sm_90 -D WIDTH=256 >/dev/null || fail "-D WIDTH=256 did not compile"
"$OPKIT" compile define.cu --arch sm_90 -DWIDTH=256 >/dev/null || fail "-DWIDTH=256 did not compile"
expect_error "-D WIDTH=128" 1 "WIDTH must be 256" -- compile define.cu --arch sm_90 -D WIDTH=128

# Two processes compiling the same new program at once: both succeed, one valid entry, no litter.
rm -rf "$OPKIT_CACHE_DIR"
printf '__global__ void race(int* a) { a[threadIdx.x] = %d; }\n' "$RANDOM" >race.cu
"$OPKIT" compile race.cu --arch sm_90 -o race1.cubin >race1.txt 2>&1 &
p1=$!
"$OPKIT" compile race.cu --arch sm_90 -o race2.cubin >race2.txt 2>&1 &
p2=$!
wait $p1 || fail "first concurrent compile failed: $(cat race1.txt)"
wait $p2 || fail "second concurrent compile failed: $(cat race2.txt)"
cmp -s race1.cubin race2.cubin || fail "concurrent compiles produced different binaries"
[ "$(bins "$OPKIT_CACHE_DIR")" == 1 ] || fail "concurrent compiles left $(bins "$OPKIT_CACHE_DIR") entries"
[ "$(tmps "$OPKIT_CACHE_DIR")" == 0 ] || fail "concurrent compiles left temporary files"
expect_contains "after the race" "cache: hit" "$("$OPKIT" compile race.cu --arch sm_90 -o race3.cubin)"
cmp -s race1.cubin race3.cubin || fail "the entry left by the race differs"

# Errors: compile errors show FILE(LINE) and the log (1); bad input is 2.
printf '__global__ void k(int* a) {\n  a[0] = 1;\n  a[1] = NOT_DEFINED;\n}\n' >broken.cu
expect_error "compile error" 1 'broken.cu(3): error: identifier "NOT_DEFINED" is undefined' -- compile broken.cu --arch sm_90
expect_error "missing file" 2 "cannot open missing.cu" -- compile missing.cu --arch sm_90
expect_error "directory" 2 "is a directory" -- compile src --arch sm_90
expect_error "bad arch" 2 "'gfx90a' is not a CUDA arch" -- compile tutorial.cu --arch gfx90a
expect_error "bad output" 2 "must end in .cubin or .ptx" -- compile tutorial.cu --arch sm_90 -o out.o
expect_error "bad define" 2 "is not NAME or NAME=VALUE" -- compile tutorial.cu --arch sm_90 -D 9=1
expect_error "bad include dir" 2 "include directory nothere does not exist" -- compile tutorial.cu --arch sm_90 -I nothere
gpu_arch=$("$OPKIT" devices 2>/dev/null | awk '/^cuda:0 /{for (i = 1; i <= NF; i++) if ($i ~ /^sm_[0-9]+,$/) {sub(",", "", $i); print $i}}')
if [ -z "$gpu_arch" ]; then
  expect_error "no GPU, no --arch" 2 "--arch sm_90" -- compile tutorial.cu
else
  expect_contains "default arch" "\"target\":\"$gpu_arch\"" "$("$OPKIT" compile tutorial.cu --json)"
fi

[ $failures -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ok: opkit compile and the kernel cache"
