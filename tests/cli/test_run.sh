#!/usr/bin/env bash
# End-to-end test of `opkit run` on every device this machine has (each GPU backend device and the
# CPU backend): the README example, every argument kind on fresh random inputs checked against a
# reference computed here, 2-D launches, dynamic shared memory, templates, and the error paths.
# Usage: test_run.sh /path/to/opkit   (exit 77: no device to run on)
set -u
OPKIT=$(realpath "${1:?usage: test_run.sh /path/to/opkit}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OPKIT_CACHE_DIR="$WORK/cache"
cd "$WORK"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# expect_eq WHAT EXPECTED ACTUAL
expect_eq() { [ "$2" == "$3" ] || fail "$1: expected [$2], got [$3]"; }
# expect_status WHAT EXPECTED_STATUS STDERR_PATTERN -- opkit args...
expect_error() {
  local what=$1 status=$2 pattern=$3
  shift 4
  "$OPKIT" "$@" >out.txt 2>err.txt
  local got=$?
  [ "$got" == "$status" ] || fail "$what: exit $got, expected $status ($(head -c 300 err.txt))"
  grep -q -- "$pattern" err.txt || fail "$what: stderr lacks [$pattern]: $(head -c 300 err.txt)"
}

devices=()
"$OPKIT" devices >devices.txt 2>&1
grep -q '^cuda:0 ' devices.txt && devices+=(cuda)
grep -q '^cpu:0 ' devices.txt && devices+=(cpu)
if [ ${#devices[@]} -eq 0 ]; then
  echo "SKIP: no device to run kernels on: $(cat devices.txt)"
  exit 77
fi

cat >tutorial.cu <<'EOF'
__global__ void test_kernel(float *a) {
  int idx = threadIdx.x + threadIdx.y * 4;
  a[idx] = 2.0 * idx;
}
EOF
cat >kernels.cu <<'EOF'
#include <stdint.h>
// y[i] = a * x[i] + b, with 32-bit inputs and a 64-bit result.
__global__ void axpb(int n, int a, const int32_t* x, long long b, int64_t* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (int64_t)a * x[i] + b;
}
// Bytes in, bytes out, unsigned scalars.
__global__ void xor_bytes(const uint8_t* in, uint8_t* out, unsigned int n, unsigned int key) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] ^ (uint8_t)key;
}
// In-place update of floats and doubles.
__global__ void scale(float* f, float s, double* d, double t, unsigned long long n) {
  unsigned long long i = threadIdx.x;
  if (i < n) { f[i] *= s; d[i] *= t; }
}
// Where each thread of a 2-D grid of 2-D blocks lands.
__global__ void coords(unsigned int* out) {
  unsigned int block = blockIdx.y * gridDim.x + blockIdx.x;
  unsigned int thread = threadIdx.y * blockDim.x + threadIdx.x;
  unsigned int i = block * blockDim.x * blockDim.y + thread;
  out[i] = blockIdx.x * 1000 + blockIdx.y * 100 + threadIdx.x * 10 + threadIdx.y;
}
template <class T> __global__ void fill(T* a, T v) { a[threadIdx.x] = v; }
// Signed bytes and the sign of 64-bit scalars.
__global__ void negate(const signed char* in, signed char* out, long long bias) {
  out[threadIdx.x] = (signed char)(-in[threadIdx.x] + bias);
}
EOF
# Reverses through dynamic shared memory (its own file: a backend that lacks it fails one case).
cat >shared.cu <<'EOF'
__global__ void reverse(const int* in, int* out) {
  extern __shared__ int s[];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
EOF

for dev in "${devices[@]}"; do
  # The README example: 0 2 4 ... 510.
  expected=$(seq 0 2 510 | tr '\n' ' ' | sed 's/ $//')
  got=$("$OPKIT" run tutorial.cu --kernel test_kernel --block 256 --arg out:f32:256 --device "$dev")
  expect_eq "$dev tutorial" "$expected" "$got"

  json=$("$OPKIT" run tutorial.cu --kernel test_kernel --block 256 --arg out:f32:256 --device "$dev" --json)
  case "$json" in
    '{"device":"'"$dev"':0",'*'"kernel":"test_kernel","outputs":[[0.0,2.0,4.0,'*'510.0]]}') ;;
    *) fail "$dev tutorial --json: unexpected $json" ;;
  esac
  if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["outputs"][0]==[2.0*i for i in range(256)], d' "$json" ||
      fail "$dev --json does not parse to the tutorial's values"
  fi

  # Scalars and input buffers on fresh random values, against bash arithmetic.
  n=$((RANDOM % 150 + 50))
  a=$((RANDOM - 16384))
  b=$(((RANDOM << 20) - (RANDOM << 5)))
  xs=() ys=()
  for ((i = 0; i < n; i++)); do
    x=$((RANDOM * 7 - 100000))
    xs+=("$x")
    ys+=("$((a * x + b))")
  done
  x_list=$(IFS=,; echo "${xs[*]}")
  got=$("$OPKIT" run kernels.cu --kernel axpb --grid $(((n + 63) / 64)) --block 64 --device "$dev" \
    --arg i32:$n --arg i32:$a --arg in:i32:$x_list --arg i64:$b --arg out:i64:$n)
  expect_eq "$dev axpb (n=$n a=$a b=$b)" "${ys[*]}" "$got"

  # Bytes from a file.
  head -c 300 /dev/urandom >bytes.bin
  key=$((RANDOM % 256))
  expected=$(od -An -v -tu1 bytes.bin | tr -s ' \n' '\n\n' | grep -v '^$' | while read -r v; do echo $((v ^ key)); done |
    tr '\n' ' ' | sed 's/ $//')
  got=$("$OPKIT" run kernels.cu --kernel xor_bytes --grid 3 --block 128 --device "$dev" \
    --arg in:u8:@bytes.bin --arg out:u8:300 --arg u32:300 --arg u32:$key)
  expect_eq "$dev xor_bytes from a file (key $key)" "$expected" "$got"

  # inout buffers come back changed; exact binary fractions keep the comparison exact.
  s=$((RANDOM % 8 + 1))
  got=$("$OPKIT" run kernels.cu --kernel scale --block 4 --device "$dev" \
    --arg inout:f32:1.5,-2.25,0,1e3 --arg f32:$s --arg inout:f64:0.5,3,-7.125,2e-3 --arg f64:-2 --arg u64:4)
  expected="$(echo "1.5 -2.25 0 1000" | awk -v s=$s '{printf "%g %g %g %g", $1*s, $2*s, $3*s, $4*s}')
-1 -6 14.25 -0.004"
  expect_eq "$dev scale inout f32/f64" "$expected" "$got"

  # 2-D grid and block.
  expected=""
  for by in 0 1 2; do for bx in 0 1; do for ty in 0 1; do for tx in 0 1 2 3; do
    expected+="$((bx * 1000 + by * 100 + tx * 10 + ty)) "
  done; done; done; done
  got=$("$OPKIT" run kernels.cu --kernel coords --grid 2,3 --block 4,2 --arg out:u32:48 --device "$dev")
  expect_eq "$dev coords 2-D" "${expected% }" "$got"

  # Dynamic shared memory.
  vals=() rev=()
  for ((i = 0; i < 64; i++)); do vals+=($((RANDOM - 16384))); done
  for ((i = 63; i >= 0; i--)); do rev+=("${vals[$i]}"); done
  got=$("$OPKIT" run shared.cu --kernel reverse --block 64 --shared 256 --device "$dev" \
    --arg in:i32:$(IFS=,; echo "${vals[*]}") --arg out:i32:64)
  expect_eq "$dev reverse via --shared" "${rev[*]}" "$got"

  # A template kernel by its name expression; signed bytes.
  got=$("$OPKIT" run kernels.cu --kernel 'fill<int>' --block 5 --arg out:i32:5 --arg i32:-7 --device "$dev")
  expect_eq "$dev fill<int>" "-7 -7 -7 -7 -7" "$got"
  got=$("$OPKIT" run kernels.cu --kernel negate --block 4 --arg in:i8:-128,-1,0,100 --arg out:i8:4 --arg i64:-1 \
    --device "$dev")
  expect_eq "$dev negate i8" "127 0 -1 -101" "$got"

  # -D reaches the kernel.
  printf '__global__ void k(int* a) { a[threadIdx.x] = VALUE; }\n' >define.cu
  got=$("$OPKIT" run define.cu --kernel k --block 3 --arg out:i32:3 -D VALUE=41 --device "$dev")
  expect_eq "$dev -D VALUE=41" "41 41 41" "$got"

  # Errors: unknown kernel (2), a compile error naming the file and line (1).
  expect_error "$dev unknown kernel" 2 "no kernel named 'nope'" -- run kernels.cu --kernel nope --block 1 --device "$dev"
  printf '__global__ void k(int* a) {\n  a[0] = oops;\n}\n' >broken.cu
  expect_error "$dev compile error" 1 'broken.cu[(:]2' -- run broken.cu --kernel k --block 1 --arg out:i32:1 --device "$dev"
done

# Parsing errors need no device beyond the first one.
dev=${devices[0]}
expect_error "missing file" 2 "cannot open missing.cu" -- run missing.cu --kernel k --block 1
expect_error "bad type" 2 "'q32' is not a buffer element type" -- run tutorial.cu --kernel test_kernel --block 1 --arg out:q32:4
expect_error "bad scalar" 2 "is not an integer that fits type u8\|neither a scalar type" -- run tutorial.cu --kernel test_kernel --block 1 --arg u8:300
expect_error "out of range" 2 "'300' is not an integer that fits type u8" -- run tutorial.cu --kernel test_kernel --block 1 --arg in:u8:1,300
expect_error "float for int" 2 "'1.5' is not an integer" -- run tutorial.cu --kernel test_kernel --block 1 --arg i32:1.5
expect_error "zero count" 2 "positive integer" -- run tutorial.cu --kernel test_kernel --block 1 --arg out:f32:0
expect_error "no colon" 2 "no ':'" -- run tutorial.cu --kernel test_kernel --block 1 --arg 5
expect_error "bad block" 2 "--block" -- run tutorial.cu --kernel test_kernel --block 0 --arg out:f32:1
expect_error "4-D grid" 2 "--grid" -- run tutorial.cu --kernel test_kernel --grid 1,1,1,1 --block 1 --arg out:f32:1
expect_error "bad device" 2 "is not a device for opkit run; use one of: auto, cuda, cuda:N, cpu" -- run tutorial.cu --kernel test_kernel --block 1 --device tpu
expect_error "missing @FILE" 2 "cannot open nothere.bin" -- run tutorial.cu --kernel test_kernel --block 1 --arg in:u8:@nothere.bin
: >empty.bin
expect_error "empty @FILE" 2 "is empty" -- run tutorial.cu --kernel test_kernel --block 1 --arg in:u8:@empty.bin
head -c 6 /dev/urandom >six.bin
expect_error "ragged @FILE" 2 "not a whole number of i32" -- run tutorial.cu --kernel test_kernel --block 1 --arg in:i32:@six.bin

if [[ " ${devices[*]} " == *" cuda "* ]]; then
  # The CUDA driver knows each kernel's parameter list (CUDA >= 12.4), so counts and sizes are checked.
  expect_error "cuda: too few arguments" 2 "takes 1 argument(s), 0 given" -- run tutorial.cu --kernel test_kernel --block 1 --device cuda
  expect_error "cuda: wrong size" 2 "argument 0 is 4 bytes" -- run tutorial.cu --kernel test_kernel --block 1 --arg i32:1 --device cuda
  expect_error "cuda: block too large" 3 "cuLaunchKernel" -- run tutorial.cu --kernel test_kernel --block 2048 --arg out:f32:2048 --device cuda
else
  if ! "$OPKIT" run tutorial.cu --kernel test_kernel --block 1 --device cuda >/dev/null 2>err.txt; then
    grep -q "CUDA" err.txt || fail "--device cuda without a GPU: unclear error: $(cat err.txt)"
  else
    fail "--device cuda succeeded without a GPU"
  fi
fi

[ $failures -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ok: opkit run on ${devices[*]}"
