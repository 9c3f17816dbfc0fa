#!/usr/bin/env bash
# End to end: `mpirun --oversubscribe -np 3 opkit hash --lines` writes, byte for byte, what one
# process writes (stdout, stderr, exit status): several inputs with empty lines, CRs and a last
# line without newline, small batches so that lines cross batches, sha256d, standard input (rank
# 0's own, not mpirun's relay), a missing input among good ones, and more ranks than lines.
# Usage: tests/cli/test_mpi_lines.sh path/to/opkit   (exit 77: skipped, no mpirun or no MPI build)
set -u
opkit=$(realpath "${1:?usage: test_mpi_lines.sh path/to/opkit}")
here=$(dirname "$(realpath "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
source "$here/mpi_env.sh"

# same LABEL HASH-ARGS...: one process and three ranks write the same stdout and stderr, and exit alike.
same() {
  local label=$1; shift
  "$opkit" hash --lines --device host "$@" >one.out 2>one.err </dev/null; local one_rc=$?
  run_mpi 3 "$opkit" hash --lines --device host "$@" >three.out 2>three.err </dev/null; local three_rc=$?
  check "$label: same digests" cmp -s one.out three.out
  check "$label: same messages" cmp -s one.err <(grep '^opkit' three.err)
  check "$label: same exit status (one process $one_rc, 3 ranks $three_rc)" [ "$one_rc" = "$three_rc" ]
}

printf 'first\n\nthird line\r\nlast without newline' >lines.txt
: >empty.txt
printf 'only line' >one-line.txt
awk 'BEGIN { srand(11); for (i = 0; i < 150000; i++) { n = int(rand() * 120); s = ""; for (j = 0; j < n; j++) s = s sprintf("%c", 32 + int(rand() * 95)); print s } }' >many.txt
head -c 3000000 /dev/urandom | tr -d '\n' | fold -w 700 >long-lines.txt

same "several inputs" lines.txt empty.txt many.txt one-line.txt
same "1 MiB batches (lines cross batches), sha256d" --batch-mib 1 --algo sha256d many.txt long-lines.txt lines.txt
same "a missing input among good ones" lines.txt missing.txt one-line.txt
same "more ranks than lines" one-line.txt
same "only an empty input" empty.txt
"$opkit" hash --lines --device host <many.txt >one.out
# Rank 0 reads its own standard input, opened on the file: mpirun's stdin relay is not what is
# tested here (it has lost and repeated data in Open MPI releases; docs/scale-out.md).
run_mpi 3 sh -c 'exec "$0" hash --lines --device host <many.txt' "$opkit" >three.out 2>three.err </dev/null
check "standard input" cmp -s one.out three.out
check "one digest per line" [ "$(wc -l <three.out)" = 150000 ]
[ "$failures" = 0 ] || { echo "the 3-rank run's messages:"; head -c 2000 three.err; }

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
