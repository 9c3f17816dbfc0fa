#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ with clang (-fsanitize=fuzzer,address,undefined) and
# runs each for FUZZ_SECONDS (default 30) from its checked-in seed corpus (tests/fuzz/corpus/NAME;
# new inputs go to a temporary copy, not into the repository). A crash, leak, timeout or failed
# property leaves its input in build/fuzz/artifacts/ and fails the script; add that input to the
# target's corpus and a regression test. Where clang++ is not installed, says so and passes.
# Each target compiles the few sources it parses with (instrumented); a target whose parser calls
# deeper into the library (stratum_line: the merkle root's sha256d; lz4_frames: device code the
# decoder's sources name) also links the release build's
# libopkit.a, which scripts/test.sh has built by then.
set -euo pipefail
cd "$(dirname "$0")/.."
CXX_FUZZ=${CXX_FUZZ:-clang++}
seconds=${FUZZ_SECONDS:-30}
if ! command -v "$CXX_FUZZ" >/dev/null; then
  echo "fuzz: $CXX_FUZZ not found; the fuzz targets are skipped (install clang to run them)"
  exit 0
fi
out=build/fuzz
mkdir -p "$out/artifacts"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -Iinclude -Isrc -Isrc/ops -Itools/opkit -include scripts/clang_tidy_compat.hpp)
declare -A sources=(
  [hex]="src/core/hex.cpp src/core/error.cpp"
  [sums_line]="tools/opkit/hash_sums_line.cpp tools/opkit/hash_names.cpp"
  [kernel_args]="tools/opkit/cli_kernel_args.cpp src/core/error.cpp"
  [kernel_names]="src/core/program.cpp src/core/error.cpp"
  [compiled_program]="src/core/program.cpp src/core/error.cpp"
  [pow_target]="src/ops/pow/target.cpp src/core/hex.cpp src/core/error.cpp"
  [stratum_line]="tools/opkit/stratum_rpc.cpp tools/opkit/stratum_json.cpp src/ops/stratum/stratum_job.cpp"
  [lz4_frames]="src/ops/lz4/lz4.cpp src/ops/lz4/stream_decoder.cpp src/ops/lz4/frame_scanner.cpp src/ops/lz4/frame_parser.cpp src/ops/lz4/host_codec.cpp"
)
declare -A libraries=(
  [stratum_line]="build/release/libopkit.a -lcrypto -llz4 -lxxhash -lgomp -ldl -lpthread"
  [lz4_frames]="build/release/libopkit.a -lcrypto -llz4 -lxxhash -lgomp -ldl -lpthread"
)
targets=${FUZZ_TARGETS:-"hex sums_line kernel_args kernel_names compiled_program pow_target stratum_line lz4_frames"}
failed=0
for name in $targets; do
  libs=${libraries[$name]:-}
  if [ -n "$libs" ] && [ ! -f "${libs%% *}" ]; then
    echo "fuzz $name: FAILED (it links ${libs%% *}: build the release preset first)"
    failed=1
    continue
  fi
  # shellcheck disable=SC2086  # the source and library lists are meant to split
  "$CXX_FUZZ" "${flags[@]}" "tests/fuzz/fuzz_$name.cpp" ${sources[$name]} $libs -o "$out/fuzz_$name"
  corpus=$(mktemp -d)
  cp -r "tests/fuzz/corpus/$name/." "$corpus/"
  if "$out/fuzz_$name" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$out/artifacts/${name}-" -print_final_stats=1 >"$out/fuzz_$name.log" 2>&1; then
    echo "fuzz $name: ok, $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$out/fuzz_$name.log" | grep -oE '[0-9]+$') runs in ${seconds} s"
  else
    echo "fuzz $name: FAILED (log: $out/fuzz_$name.log)"
    grep -E "ERROR|SUMMARY|Test unit written" "$out/fuzz_$name.log" | head -5
    failed=1
  fi
  rm -rf "$corpus"
done
exit $failed
