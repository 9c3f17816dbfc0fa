#!/usr/bin/env bash
# End to end: `opkit mine --pool` against the test pool (tests/stratum/test_pool.py: loopback, an
# ephemeral port, bounded in time), which checks every submitted share with hashlib. Accepted
# shares; a rejected one (the pool's difficulty rose before its next job); a clean_jobs switch
# mid-search; a dropped connection and the reconnect; a pool that sends garbage, a bad notify,
# refuses the worker or never answers (exit 3 naming what it sent); an unreachable pool; bad
# options (exit 2); Ctrl-C (exit 130 within a second, saying where it got to).
# Usage: tests/cli/test_mine_pool.sh path/to/opkit   (exit 77: skipped, no python3)
set -u
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
pool_py=$(realpath "$(dirname "$0")/../stratum/test_pool.py")
. "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin test_mine_pool.sh "$@"
pool_pid=
cli_test_cleanup_hook='[ -n "$pool_pid" ] && kill "$pool_pid" 2>/dev/null'

start_pool() {  # start_pool SCENARIO: the pool in the background, its port in $port
  rm -f port report
  python3 "$pool_py" "$1" port report --seconds 60 &
  pool_pid=$!
  for _ in $(seq 100); do [ -f port ] && break; sleep 0.1; done
  port=$(cat port)
}
stop_pool() {  # waits for the pool's verdict (it ends once the client left), in $pool_rc
  wait "$pool_pid"
  pool_rc=$?
  pool_pid=
}
mine_pool() {  # mine_pool OPTIONS...: bounded, on the host, small nonce ranges so headers roll
  timeout 60 "$opkit" mine --pool "stratum+tcp://127.0.0.1:$port" --user w1 --device host --count 4194304 \
    --timeout 3 --quiet "$@" >out 2>err </dev/null
  rc=$?
}
report() { python3 -c "import json,sys; r=json.load(open('report')); print($1)"; }

start_pool accept
mine_pool --shares 3 --json
stop_pool
check "accept: exit 0" [ "$rc" = 0 ]
check "accept: the pool's checks passed" [ "$pool_rc" = 0 ]
check "accept: 3 accepted by the pool" [ "$(report "len(r['accepted'])")" = 3 ]
check "accept: 3 accepted events" [ "$(grep -c '"event":"accepted"' out)" = 3 ]
check "accept: shares carry mining.submit's params" grep -q '"submit":\["w1","a1","[0-9a-f]\{8\}","674e8880","[0-9a-f]\{8\}"\]' out
check "accept: stopped line" grep -q '"event":"stopped".*"reason":"shares"' out

start_pool reject
mine_pool --shares 4 --json
stop_pool
check "reject: exit 0" [ "$rc" = 0 ]
check "reject: the pool's checks passed" [ "$pool_rc" = 0 ]
check "reject: the pool rejected a low-difficulty share" [ "$(report "r['rejected'][0]['error'][1]")" = "Low difficulty share" ]
check "reject: the client logged the reason" grep -q '"event":"rejected".*"reason":"23 Low difficulty share"' out
check "reject: mining went on with the next job" [ "$(grep -c '"event":"accepted".*"job_id":"r2"' out)" -ge 1 ]

start_pool clean
mine_pool --shares 4 --json
stop_pool
check "clean: exit 0" [ "$rc" = 0 ]
check "clean: the pool's checks passed" [ "$pool_rc" = 0 ]
check "clean: shares of job b1 after the switch" [ "$(report "sum(e['params'][1] == 'b1' for e in r['accepted'])")" -ge 2 ]
# Nothing of job a1 reaches the pool once b1 was taken up (a share in flight may be stale).
last_a=$(grep -n '"event":"share".*"job_id":"a1".*"status":"submitted"' out | tail -1 | cut -d: -f1)
job_b=$(grep -n '"event":"job".*"job_id":"b1"' out | cut -d: -f1)
check "clean: no a1 share submitted after job b1" [ "${last_a:-0}" -lt "${job_b:-0}" ]

start_pool drop
mine_pool --shares 4 --json
stop_pool
check "drop: exit 0" [ "$rc" = 0 ]
check "drop: the pool's checks passed" [ "$pool_rc" = 0 ]
check "drop: reconnected" [ "$(report "r['connections']")" = 2 ]
check "drop: shares on the new connection's extranonce1" \
  [ "$(report "sum(e['extranonce1'] == 'f0000002' for e in r['accepted'])")" -ge 2 ]
check "drop: disconnected event with the retry" grep -q '"event":"disconnected".*"retry_in"' out

# A pool that misbehaves: exit 3 and a message naming what it sent.
fails() {  # fails SCENARIO EXPECTED-TEXT
  start_pool "$1"
  mine_pool --shares 1
  kill "$pool_pid" 2>/dev/null
  stop_pool
  check "$1: exit 3" [ "$rc" = 3 ]
  check "$1: message" grep -q -- "$2" err
}
fails garbage "the pool sent a line that is not JSON: 'this is not json {'"
fails hugenumber "the pool sent a line that is not JSON: '{\"id\": null, \"method\": \"mining.set_difficulty\", \"params\": \[1e999\]}'"
fails badnotify "mining.notify params\[2\] (coinb1) has a character other than 0-9"
fails refuse "the pool refused worker 'w1': 24 Unauthorized worker"
fails silent "before the pool answered mining.subscribe and mining.authorize: mining.subscribe (request 1) unanswered for 3 s"

# Unreachable: a port nobody listens on (the one a finished pool had).
mine_pool --shares 1
check "unreachable: exit 3" [ "$rc" = 3 ]
check "unreachable: message" grep -q "connect to 127.0.0.1:$port: cannot connect" err

# Bad options: exit 2.
"$opkit" mine --pool "http://127.0.0.1:1" --user w >out 2>err </dev/null
check "bad URL: exit 2" [ "$?" = 2 ]
check "bad URL: message" grep -q "is not a stratum+tcp://HOST:PORT URL" err
"$opkit" mine --pool "stratum+tcp://127.0.0.1:99999" --user w >out 2>err </dev/null
check "bad port: exit 2" [ "$?" = 2 ]
"$opkit" mine --pool "stratum+tcp://127.0.0.1:1" >out 2>err </dev/null
check "no --user: exit 2" [ "$?" = 2 ]
check "no --user: message" grep -q -- "--pool needs --user NAME" err

# Ctrl-C while mining for the pool.
start_pool accept
interrupt_after 2 INT timeout 60 "$opkit" mine --pool "stratum+tcp://127.0.0.1:$port" --user w1 --device host --quiet
stop_pool
check "ctrl-c: exit 130" [ "$rc" = 130 ]
check "ctrl-c: stopped within a second (${elapsed_ms} ms)" [ "$elapsed_ms" -lt 1000 ]
check "ctrl-c: where it got to" grep -q "interrupted after .* accepted, .* rejected, .*; last job a1, extranonce2 " err
check "ctrl-c: the pool's checks passed" [ "$pool_rc" = 0 ]

cli_test_end
