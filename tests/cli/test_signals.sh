#!/usr/bin/env bash
# Ctrl-C (SIGINT) and SIGTERM while `hash FILE`, `hash -c`, `encrypt` (streaming CTR and
# whole-input GCM) and `decrypt` wait for input: exit 130, one line saying how far each got, and
# no output file or temporary left behind (issue 16, case 16). The input is a FIFO that this shell
# holds open for writing on a descriptor of its own, so that the command blocks in a read and no
# helper process is left over after a case (an earlier version fed the FIFO from a background
# `sleep`, which outlived its case).
# usage: test_signals.sh path/to/opkit
. "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin test_signals.sh "$@"

key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
printf 'abc' >abc.txt
printf '%s  slow.fifo\n' "$(sha256sum abc.txt | cut -d' ' -f1)" >slow.sums

# catches PID SIGNAL: waits (up to 10 s) until the process has a handler for SIGNAL (/proc SigCgt).
catches() {
  local bit mask
  bit=$(($(kill -l "$2") - 1))
  for _ in $(seq 100); do
    mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
    [ -n "$mask" ] && [ $(((16#$mask >> bit) & 1)) = 1 ] && return 0
    sleep 0.1
  done
}

# stop_while_reading SIGNAL LABEL EXPECTED-MESSAGE OUTPUT-FILE ARGS...: runs `opkit ARGS` on a
# FIFO that never ends, sends SIGNAL once it is waiting, and checks the exit, the message and
# that the folder holds exactly what it held before.
stop_while_reading() {
  local signal=$1 label=$2 message=$3 output=$4
  shift 4
  mkfifo slow.fifo
  exec 3<>slow.fifo  # read-write: opening does not block, and the FIFO stays open until closed
  printf 'abc' >&3
  local before
  before=$(ls -A | grep -v '^slow.fifo$' | sort)
  "$opkit" "$@" >out.txt 2>err.txt </dev/null &
  local pid=$!
  catches "$pid" "$signal"  # a signal before the handler is installed would just kill it
  sleep 0.5                 # then into its read of the FIFO
  kill "-$signal" "$pid"
  wait "$pid"
  local rc=$?
  exec 3>&-
  rm -f slow.fifo
  cat err.txt >>messages.log
  check "$label SIG$signal: exit 130 (got $rc: $(head -c 200 err.txt))" [ "$rc" = 130 ]
  check "$label SIG$signal: one line saying how far it got" grep -q "$message" err.txt
  check "$label SIG$signal: one line of error" [ "$(wc -l <err.txt)" = 1 ]
  if [ -n "$output" ]; then check "$label SIG$signal: no $output written" [ ! -e "$output" ]; fi
  check "$label SIG$signal: no temporary left ($(ls -A | tr '\n' ' '))" \
    [ "$(ls -A | grep -vE '^((out|err)\.txt|messages\.log)$' | sort)" = "$(echo "$before" | grep -vE '^((out|err)\.txt|messages\.log)$')" ]
}

for signal in INT TERM; do
  stop_while_reading "$signal" "hash FILE" "interrupted; 0 of 1 files were hashed" "" hash slow.fifo
  stop_while_reading "$signal" "hash -c" "interrupted" "" hash -c slow.sums
  stop_while_reading "$signal" "encrypt aes-256-ctr" "interrupted after [0-9]* bytes; the output was not written" \
    out.ctr encrypt --cipher aes-256-ctr -K "$key" --iv 000102030405060708090a0b0c0d0e0f slow.fifo out.ctr
  stop_while_reading "$signal" "encrypt aes-256-gcm" "interrupted after [0-9]* bytes; the output was not written" \
    out.gcm encrypt --cipher aes-256-gcm -K "$key" --iv 000102030405060708090a0b slow.fifo out.gcm
  stop_while_reading "$signal" "decrypt aes-256-ctr" "interrupted after [0-9]* bytes; the output was not written" \
    out.dec decrypt --cipher aes-256-ctr -K "$key" --iv 000102030405060708090a0b0c0d0e0f slow.fifo out.dec
done

# The key never shows in what the interrupted commands said.
no_key_in_messages() { [ "$(wc -l <messages.log)" = 10 ] && ! grep -q "$key" messages.log; }
check "10 messages (one a case), none quoting the key" no_key_in_messages

cli_test_end
