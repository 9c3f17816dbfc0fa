#!/usr/bin/env bash
# On the GPU machine (torch, nanobind, scikit-build-core preinstalled): opkit.torch on CUDA. Installs
# the Python package, runs the torch tests (tests/python/test_torch_ops.py: opcheck, torch.compile
# fullgraph, CUDA graph capture and replay, streams; test_gpu_torch.py; test_torch_cipher_lz4_ops.py:
# the cipher and LZ4 ops, their CUDA-graph capture included), then
# bench/python/bench_torch_ops.py: torch.ops.opkit.sha256 throughput against the kernel alone
# (torch.profiler) and per-call cost of small batches, eager and in a CUDA graph. Logs and JSON go
# to $OUT; the table comes last. Run from the repository root:
#   OUT=/some/dir bash bench/device/torch.sh     (about 3 minutes, most of it the build)
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH

source bench/device/python_install.sh
opkit_python_install build/python-gpu "$OUT/torch_install.txt" || exit 1
"$py" -c "import torch, opkit; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name())"

echo "== pytest test_torch_ops.py test_gpu_torch.py test_torch_cipher_lz4_ops.py"
status=0
if "$py" -c "import pytest" 2>/dev/null; then
  (cd tests/python && "$py" -m pytest -ra -p no:cacheprovider -p no:logging --durations=5 \
    test_torch_ops.py test_gpu_torch.py test_torch_cipher_lz4_ops.py 2>&1) >"$OUT/torch_tests.txt"
  status=$?
  grep -E "^(FAILED|ERROR|SKIPPED)" "$OUT/torch_tests.txt" | head -20
else
  echo "pytest is missing and build/wheels was not carried: tests not run" | tee "$OUT/torch_tests.txt"
  status=1
fi

echo "== bench/python/bench_torch_ops.py"
"$py" bench/python/bench_torch_ops.py --json "$OUT/torch_bench.json" >"$OUT/torch_bench.txt" 2>&1
bench=$?
echo "tests: $(tail -1 "$OUT/torch_tests.txt") (exit $status); bench exit $bench"
cat "$OUT/torch_bench.txt"
[ "$status" -eq 0 ] && [ "$bench" -eq 0 ]
