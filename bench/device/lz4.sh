#!/usr/bin/env bash
# On the GPU machine: build; run the LZ4 unit, GPU and CLI tests; the GPU mutation test under
# compute-sanitizer memcheck (when installed); build three corpora; time opkit's kernels
# device-resident (bench/lz4_bench.cpp), the host engine (liblz4 on all cores), the `lz4 -1`
# tool (one thread) and nvCOMP's LZ4 (when the wheels are carried in .whl/: see
# /work/shared/tools/nvcomp-anchor.py) on the same data at 64 KiB blocks.
# Corpora (reproducible from the machine's own files, sorted by path, `LC_ALL=C`):
#   mixed.bin  the files under /usr/lib and /usr/share concatenated, first 256 MiB
#   python.txt the *.py files under /usr/lib/python3* concatenated, first 256 MiB (or all)
#   logs.txt   256 MiB of generated log lines (awk, fixed seed): highly compressible
# Run from the repository root:  OUT=/some/dir bash bench/device/lz4.sh   (about 4 minutes)
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH LC_ALL=C
B=build/release
S="$OUT/lz4_summary.txt"
log() { echo "== $*" | tee -a "$S"; }

log "build"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 2>&1 | tail -2

log "tests"
$B/tests/opkit_unit_tests --gtest_filter='Lz4*' --gtest_brief=1 >"$OUT/lz4_unit.txt" 2>&1
tail -2 "$OUT/lz4_unit.txt" | tee -a "$S"
$B/tests/opkit_gpu_tests --gtest_filter='Lz4*' --gtest_brief=1 >"$OUT/lz4_gpu_tests.txt" 2>&1
tail -2 "$OUT/lz4_gpu_tests.txt" | tee -a "$S"
bash tests/cli/test_lz4.sh "$B/tools/opkit/opkit" >"$OUT/lz4_cli.txt" 2>&1
echo "cli test exit status $? (0 ok, 77 skipped)" | tee -a "$S"
if command -v compute-sanitizer >/dev/null; then
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/opkit_gpu_tests \
    --gtest_filter='Lz4Gpu.MutatedFramesFailWithAnError' >"$OUT/lz4_memcheck.txt" 2>&1
  echo "memcheck exit status $? (0: no errors; 9: memcheck found some; 124: timed out)" | tee -a "$S"
  grep -E "ERROR SUMMARY" "$OUT/lz4_memcheck.txt" | tail -1 | tee -a "$S"
fi

log "corpora"
C=/tmp/lz4_corpora
mkdir -p $C
limit=$((256 << 20))
[ -s $C/mixed.bin ] || find /usr/lib /usr/share -type f -size +0 2>/dev/null | sort | xargs -d '\n' cat 2>/dev/null | head -c $limit >$C/mixed.bin
[ -s $C/python.txt ] || find /usr/lib/python3* -type f -name '*.py' 2>/dev/null | sort | xargs -d '\n' cat 2>/dev/null | head -c $limit >$C/python.txt
[ -s $C/logs.txt ] || awk 'BEGIN { srand(42); split("GET POST PUT DELETE", m, " "); split("200 200 200 304 404 500", s, " ");
  for (i = 0; ; i++) { printf "2026-12-03T%02d:%02d:%02d.%03dZ host%02d %s /api/v1/items/%d status=%s bytes=%d ms=%.1f\n",
    (i / 3600000) % 24, (i / 60000) % 60, (i / 1000) % 60, i % 1000, int(rand() * 16), m[1 + int(rand() * 4)],
    int(rand() * 5000), s[1 + int(rand() * 6)], int(rand() * 100000), rand() * 250 } }' | head -c $limit >$C/logs.txt
ls -l $C | tee -a "$S"

log "opkit (GPU kernels device-resident; liblz4 host engine on $(nproc) cores), 64 KiB blocks"
timeout 200 $B/bench/opkit_lz4_bench --block 4 --runs 5 $C/mixed.bin $C/python.txt $C/logs.txt | tee "$OUT/lz4_bench.txt"
echo "bench exit status ${PIPESTATUS[0]} (1: a GPU result was wrong)" | tee -a "$S"

log "lz4 -1 -B4 -BI tool (one thread)"
for f in $C/mixed.bin $C/python.txt $C/logs.txt; do
  n=$(stat -c %s $f)
  t0=$(date +%s.%N); lz4 -1 -B4 -BI -q -c $f >$C/tool.lz4; t1=$(date +%s.%N)
  lz4 -d -q -c $C/tool.lz4 >/dev/null; t2=$(date +%s.%N)
  m=$(stat -c %s $C/tool.lz4)
  awk -v f=$(basename $f) -v n=$n -v m=$m -v a=$t0 -v b=$t1 -v c=$t2 \
    'BEGIN { printf "%-28s %-22s ratio %.3f  compress %7.2f GB/s  decompress %7.2f GB/s (incl. file I/O)\n", f, "lz4 -1 tool", n / m, n / (b - a) / 1e9, n / (c - b) / 1e9 }'
done | tee "$OUT/lz4_tool.txt"

if ls .whl/*.whl >/dev/null 2>&1 && [ -f /work/shared/tools/nvcomp-anchor.py -o -f tools/nvcomp-anchor.py ]; then
  log "nvCOMP LZ4 (device-resident, default chunking)"
  anchor=$( [ -f tools/nvcomp-anchor.py ] && echo tools/nvcomp-anchor.py || echo /work/shared/tools/nvcomp-anchor.py)
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -1
  PYTHONPATH=/tmp/site timeout 150 python3 "$anchor" --algos LZ4 $C/mixed.bin $C/python.txt $C/logs.txt | tee "$OUT/lz4_nvcomp.txt"
else
  echo "(nvCOMP skipped: no .whl/ with nvidia-nvcomp-cu13 + nvidia-libnvcomp-cu13, or no nvcomp-anchor.py)" | tee -a "$S"
fi

log "table"
cat "$OUT/lz4_bench.txt" "$OUT/lz4_tool.txt" "$OUT/lz4_nvcomp.txt" 2>/dev/null | grep -E "ratio" | tee -a "$S"
