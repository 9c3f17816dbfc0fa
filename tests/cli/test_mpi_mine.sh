#!/usr/bin/env bash
# End to end: `mpirun --oversubscribe -np 3 opkit mine --device host` prints what one process
# prints (nonce, hash, range, exit status; the text and the --json fields that do not depend on
# timing or devices): a real Bitcoin header (block 1, a 2^20-nonce range around its nonce), data
# mode over several rounds, a range with no answer, and a range that starts past the answer.
# Usage: tests/cli/test_mpi_mine.sh path/to/opkit   (exit 77: skipped, no mpirun or no MPI build)
set -u
opkit=$(realpath "${1:?usage: test_mpi_mine.sh path/to/opkit}")
here=$(dirname "$(realpath "$0")")
data_dir=${OPKIT_TEST_DATA_DIR:-$here/../data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
source "$here/mpi_env.sh"

# What does not depend on timing or devices: the text lines before "hashes", or the JSON fields.
stable_text() { sed -n '/^hashes /q;p' "$1"; }
stable_json() {
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print({k: r[k] for k in ("found", "nonce", "hash", "start", "last", "interrupted", "searched_through")})' "$1"
}

# same LABEL MINE-ARGS...: one process and three ranks, text and --json, the same answer.
same() {
  local label=$1; shift
  "$opkit" mine --device host --quiet "$@" >one.txt 2>one.err; local one_rc=$?
  run_mpi 3 "$opkit" mine --device host --quiet "$@" >three.txt 2>three.err </dev/null; local three_rc=$?
  check "$label: exit status (one process $one_rc, 3 ranks $three_rc)" [ "$one_rc" = "$three_rc" ]
  check "$label: same text" cmp -s <(stable_text one.txt) <(stable_text three.txt)
  check "$label: every rank listed" [ "$(grep -c '^device    rank [0-2] on ' three.txt)" -ge 3 ]
  if [ "$(stable_text one.txt)" != "$(stable_text three.txt)" ]; then
    diff <(stable_text one.txt) <(stable_text three.txt) | head -5
    head -5 three.err
  fi
  "$opkit" mine --device host --quiet --json "$@" >one.json 2>/dev/null
  run_mpi 3 "$opkit" mine --device host --quiet --json "$@" >three.json 2>/dev/null </dev/null
  check "$label: same --json fields" [ "$(stable_json one.json)" = "$(stable_json three.json)" ]
}

header=$(awk -F'\t' '$1 == 1 { print $2 }' "$data_dir/bitcoin-headers.tsv")
block_hash=$(awk -F'\t' '$1 == 1 { print $3 }' "$data_dir/bitcoin-headers.tsv")
le=${header:152:8}
nonce=$((16#${le:6:2}${le:4:2}${le:2:2}${le:0:2}))

same "Bitcoin block 1, 2^20 nonces around its nonce" --header "$header" --start $((nonce - 600000)) --count 1048576
check "Bitcoin block 1: the block's nonce and hash" grep -qx "nonce     $nonce" three.txt
check "Bitcoin block 1: the block's hash" grep -qx "hash      $block_hash" three.txt
same "Bitcoin block 1, range starting at its nonce" --header "$header" --start "$nonce" --count 3000
same "Bitcoin block 1, range just past its nonce (not found)" --header "$header" --start $((nonce + 1)) --count 300000
check "not found: said so" grep -qx "not found in \[$((nonce + 1)), $((nonce + 300000))\]" three.txt
same "data mode, difficulty 12" --data "opkit over ranks" --difficulty 12
same "data mode, difficulty 20 (several rounds)" --data "hello opkit" --difficulty 20
same "data mode, long string (two blocks), from a start" --data "$(printf 'x%.0s' $(seq 1 100))" --difficulty 16 --start 123456
same "data mode, across a digit-count boundary" --data "carry" --difficulty 14 --start 999000 --count 200000
same "data mode, nothing in the range" --data "x" --difficulty 40 --count 200000

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
