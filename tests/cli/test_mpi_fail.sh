#!/usr/bin/env bash
# End to end, `opkit mine` over 3 ranks when things go wrong: a rank that throws after its first
# round (test hook OPKIT_TEST_MPI_FAIL_RANK) ends the whole job within seconds with its error and
# a non-zero status; Ctrl-C on mpirun (SIGINT, which mpirun turns into SIGTERM to every rank) and
# SIGUSR1 (forwarded to every rank) stop the search, and rank 0 says where to resume.
# Usage: tests/cli/test_mpi_fail.sh path/to/opkit   (exit 77: skipped, no mpirun or no MPI build)
set -u
opkit=$(realpath "${1:?usage: test_mpi_fail.sh path/to/opkit}")
here=$(dirname "$(realpath "$0")")
data_dir=${OPKIT_TEST_DATA_DIR:-$here/../data}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
source "$here/mpi_env.sh"

# Block 1's nonce is about 2.6e9: searching from 0 on 2 cores takes minutes, so only the failure
# or the signal ends these runs.
header=$(awk -F'\t' '$1 == 1 { print $2 }' "$data_dir/bitcoin-headers.tsv")

started=$(date +%s)
OPKIT_TEST_MPI_FAIL_RANK=1 timeout 60 mpirun --oversubscribe --bind-to none -np 3 \
  "$opkit" mine --header "$header" --device host --quiet >fail.out 2>fail.err </dev/null
rc=$?
took=$(($(date +%s) - started))
check "a failing rank: non-zero exit (got $rc; 124 is a hang)" [ "$rc" != 0 -a "$rc" != 124 ]
check "a failing rank: its error is printed" grep -q "rank 1 failed on purpose after its first round" fail.err
check "a failing rank: the rank is named" grep -q "on rank 1 of 3" fail.err
check "a failing rank: no result printed" [ ! -s fail.out ]
check "a failing rank: the job ends within 10 s (took ${took}s)" [ "$took" -le 10 ]
[ "$failures" = 0 ] || head -20 fail.err

# Every process below PID (mpirun starts the ranks directly in some Open MPI builds and through a
# local daemon in others).
descendants() {
  local child
  for child in $(ps --ppid "$1" -o pid= 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}

# Waits (up to 30 s) until the 3 opkit ranks below mpirun PID catch SIGTERM and SIGUSR1 (/proc
# SigCgt), so that a signal sent now stops the search rather than killing a rank still starting.
ranks_catch_signals() {
  local pid=$1 tries=0 ready child mask
  while [ "$tries" -lt 300 ]; do
    ready=0
    for child in $(descendants "$pid"); do
      [ "$(cat "/proc/$child/comm" 2>/dev/null)" = opkit ] || continue
      mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$child/status" 2>/dev/null)
      [ -n "$mask" ] && [ $((16#$mask & 0x4200)) = $((0x4200)) ] && ready=$((ready + 1))
    done
    [ "$ready" -ge 3 ] && return 0
    sleep 0.1
    tries=$((tries + 1))
  done
  return 1
}

# stop_with SIGNAL [MPIRUN-OPTIONS...]: mine from 0, send the signal to mpirun once every rank has
# searched for a second, wait for the job to end.
stop_with() {
  local signal=$1; shift
  mpirun --oversubscribe --bind-to none "$@" -np 3 "$opkit" mine --header "$header" --device host --quiet \
    >stop.out 2>stop.err </dev/null &
  local pid=$!
  ranks_catch_signals "$pid" || echo "the ranks did not install their signal handlers within 30 s"
  sleep 1
  kill -s "$signal" "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 150 ]; do sleep 0.1; waited=$((waited + 1)); done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "mpirun still running 15 s after SIG$signal"; fi
  wait "$pid"
}

resume_line='^opkit mine: interrupted; every nonce of \[0, [0-9]*\] was searched; resume with --start [0-9]*$'
# mpirun sends SIGTERM about a second after Ctrl-C and SIGKILL a second later; a longer grace here
# keeps the test from depending on the speed of a loaded 2-core machine.
stop_with INT --mca odls_base_sigkill_timeout 3
rc=$?
check "Ctrl-C: non-zero exit (got $rc)" [ "$rc" != 0 ]
check "Ctrl-C: rank 0 says where to resume" grep -q "$resume_line" stop.err
check "Ctrl-C: the result block is printed" grep -q "^hashes " stop.out
[ "$failures" = 0 ] || head -20 stop.err

stop_with USR1
rc=$?
check "SIGUSR1: exit status 130 (got $rc)" [ "$rc" = 130 ]
check "SIGUSR1: rank 0 says where to resume" grep -q "$resume_line" stop.err
resume=$(sed -n 's/.*resume with --start \([0-9]*\)$/\1/p' stop.err)
check "SIGUSR1: the search got somewhere" [ "${resume:-0}" -gt 0 ]

echo "$pass passed, $failures failed"
[ "$failures" = 0 ]
