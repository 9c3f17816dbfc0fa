#!/usr/bin/env bash
# On the GPU machine: the SHA-256 and mining rates of this tree against a baseline tree, side by
# side in one run (A B A B), so that a refactor can be shown not to slow the kernels down.
# The baseline is a source snapshot carried in .baseline/ (made here with
#   mkdir -p .baseline && git archive <commit> | tar -x -C .baseline
# and named in the device call's carry list). Without it the script says so and exits 77.
#   OUT=/some/dir bash bench/device/platform_compare.sh        (about 3 minutes)
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
[ -d .baseline ] || { echo "no .baseline/ carried: nothing to compare against"; exit 77; }

build() {  # build SRC DIR: the two benchmark programs only
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPKIT_WERROR=OFF -DOPKIT_BUILD_TESTS=OFF \
    -DOPKIT_BUILD_EXAMPLES=OFF -DOPKIT_BUILD_PYTHON=OFF >/dev/null &&
    cmake --build "$2" -j 16 --target opkit_sha256_bench opkit_pow_bench 2>&1 | tail -1
}
build .baseline build/baseline
build . build/release

old=build/baseline/bench
new=build/release/bench
cases=$(comm -12 <("$old/opkit_sha256_bench" --list | sort) <("$new/opkit_sha256_bench" --list | sort) |
  grep -E '^sha256d?_L(32|64|80|1024)_b256_pt1_default$')

rate() {  # rate BIN CACHE CASE: the GH/s column of the case's row
  OPKIT_CACHE_DIR="$2" "$1" --only "$3" --no-cpu 2>&1 | tee -a "$OUT/compare_raw.txt" |
    awk '$1 == "gpu" {print $8; exit}'
}
{
  echo "| case | baseline run 1 | new run 1 | baseline run 2 | new run 2 | new / baseline (medians) |"
  echo "|---|---:|---:|---:|---:|---:|"
  for c in $cases; do
    a1=$(rate "$old/opkit_sha256_bench" /tmp/cache-old "$c")
    b1=$(rate "$new/opkit_sha256_bench" /tmp/cache-new "$c")
    a2=$(rate "$old/opkit_sha256_bench" /tmp/cache-old "$c")
    b2=$(rate "$new/opkit_sha256_bench" /tmp/cache-new "$c")
    ratio=$(awk -v a1="$a1" -v a2="$a2" -v b1="$b1" -v b2="$b2" 'BEGIN {a=(a1+a2)/2; b=(b1+b2)/2; if (a > 0) printf "%.3f", b/a; else print "?"}')
    echo "| $c | $a1 | $b1 | $a2 | $b2 | $ratio |"
  done
} | tee "$OUT/compare_sha256.md"

for run in 1 2; do
  OPKIT_CACHE_DIR=/tmp/cache-old "$old/opkit_pow_bench" >"$OUT/pow_baseline_$run.txt" 2>&1
  OPKIT_CACHE_DIR=/tmp/cache-new "$new/opkit_pow_bench" >"$OUT/pow_new_$run.txt" 2>&1
done
echo
echo "| mining case | baseline 1 | new 1 | baseline 2 | new 2 |"
echo "|---|---|---|---|---|"
# Rows joined by their name, not their line: a variant only one tree has gets "-" in the other.
python3 - "$OUT"/pow_baseline_1.txt "$OUT"/pow_new_1.txt "$OUT"/pow_baseline_2.txt "$OUT"/pow_new_2.txt <<'PY' |
import sys
def rows(path):
    out = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().split("|")[1:-1]]
        if len(cells) >= 2 and not cells[1].startswith(("---", "rate")) and "1 thread" not in cells[1]:
            out[cells[0]] = cells[1]
    return out
tables = [rows(p) for p in sys.argv[1:]]
names = list(tables[1]) + [n for n in tables[0] if n not in tables[1]]
for n in names:
    print(f"| {n} | " + " | ".join(t.get(n, "-") for t in tables) + " |")
PY
  tee "$OUT/compare_pow.md"
