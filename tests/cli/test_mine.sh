#!/usr/bin/env bash
# End to end: `opkit mine` on the CPU. A real header finds its real nonce and hash (text and
# JSON); data mode finds the lowest nonce that sha256sum confirms; not found exits 1; bad input
# exits 2 with one message; Ctrl-C stops within a second, prints where to resume, exits 130.
# Usage: tests/cli/test_mine.sh path/to/opkit   (exit 77: skipped, no sha256sum)
set -u
command -v sha256sum >/dev/null || { echo "skip: no sha256sum"; exit 77; }
data_dir=$(realpath "${OPKIT_TEST_DATA_DIR:-$(dirname "$0")/../data}")
. "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin test_mine.sh "$@"
mine() { "$opkit" mine --device host --quiet "$@" >out 2>err </dev/null; rc=$?; }

# Bitcoin mode: every real header, 2^20 nonces around its nonce.
while IFS=$'\t' read -r height header hash; do
  case $height in ''|\#*|height) continue ;; esac
  nonce=$((16#${header:158:2}${header:156:2}${header:154:2}${header:152:2}))
  start=$((nonce > 524288 ? nonce - 524288 : 0))
  mine --header "$header" --start "$start" --count 1048576
  check "height $height: exit 0" [ "$rc" = 0 ]
  check "height $height: nonce" grep -qx "nonce     $nonce" out
  check "height $height: hash" grep -qx "hash      $hash" out
  mine --header "$header" --start "$start" --count 1048576 --json
  check "height $height: json" grep -q "\"found\":true.*\"hash\":\"$hash\".*\"nonce\":$nonce," out
done <"$data_dir/bitcoin-headers.tsv"
genesis=$(awk -F'\t' '$1 == 0 {print $2}' "$data_dir/bitcoin-headers.tsv")

# Data mode: the answer meets the difficulty and no smaller nonce does (checked with sha256sum).
mine --data "opkit" --difficulty 10 --start 5
check "data: exit 0" [ "$rc" = 0 ]
found=$(awk '$1 == "nonce" {print $2}' out)
digest=$(printf '%s' "opkit$found" | sha256sum | cut -c1-64)
check "data: hash printed is sha256(data || nonce)" grep -qx "hash      $digest" out
check "data: 10 leading zero bits" [ "$((16#${digest:0:3} >> 2))" = 0 ]
lower_ok=1
for ((n = 5; n < found; n++)); do
  d=$(printf '%s' "opkit$n" | sha256sum | cut -c1-3)
  if [ "$((16#$d >> 2))" = 0 ]; then lower_ok=0; break; fi
done
check "data: no smaller nonce qualifies" [ "$lower_ok" = 1 ]

# Not found in the range: exit 1, and the JSON says so.
mine --header "$genesis" --start 0 --count 1000 --json
check "not found: exit 1" [ "$rc" = 1 ]
check "not found: json" grep -q '"found":false' out

# Bad input: exit 2 with a message naming the problem.
bad() {
  local label=$1 expect=$2; shift 2
  mine "$@"
  check "$label: exit 2" [ "$rc" = 2 ]
  check "$label: message" grep -q -- "$expect" err
}
bad "short header" "160 hex digits" --header 0011
bad "non-hex header" "non-hex character" --header "${genesis:0:158}zz"
bad "negative nBits" "negative" --header "${genesis:0:144}ffff801d${genesis:152:8}"
bad "zero difficulty" "1..255" --data x --difficulty 0
bad "both modes" "exactly one of" --header "$genesis" --data x --difficulty 4
bad "no mode" "exactly one of"
bad "start past 32 bits" "past the last nonce" --header "$genesis" --start 4294967296
bad "range past 32 bits" "passes the last nonce" --header "$genesis" --start 4294967000 --count 1000
bad "count not a number" "decimal integer" --data x --difficulty 4 --count 12abc
bad "bad target" "64 hex digits" --header "$genesis" --target 00ff
"$opkit" mine --data x --difficulty 4 --device tpu >out 2>err </dev/null
check "bad device: exit 2" [ "$?" = 2 ]
check "bad device: message" grep -q "'tpu' is not a device for opkit mine; use one of: auto, host, all, cuda" err

# Ctrl-C: a search that cannot finish stops within a second, says where to resume, exits 130.
interrupt_after 1 INT "$opkit" mine --device host --quiet --data "forever" --difficulty 200 --start 1000 --count 1000000000000
check "ctrl-c: exit 130" [ "$rc" = 130 ]
check "ctrl-c: stopped within a second (${elapsed_ms} ms)" [ "$elapsed_ms" -lt 1000 ]
check "ctrl-c: resume hint" grep -q "resume with --start [0-9]" err
resume=$(sed -n 's/.*resume with --start \([0-9]*\).*/\1/p' err)
check "ctrl-c: resume point past the start" [ "${resume:-0}" -gt 1000 ]
# The resume line is the complete tail: --count is what is left of the original range, so that
# resuming as told searches exactly [resume, 1000 + 10^12).
remaining=$(sed -n 's/.*resume with --start [0-9]* --count \([0-9]*\)$/\1/p' err)
check "ctrl-c: resume count is the rest of the range" [ "$((resume + ${remaining:-0}))" = 1000000001000 ]

cli_test_end
