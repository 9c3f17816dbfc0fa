#!/usr/bin/env bash
# End to end: `opkit mine --job` on the CPU. Real block 100000, given as a Stratum job, yields its
# real nonce and hash (the prevhash word order, the coinbase split and the merkle branch all have
# to be right); a synthetic job's headers and shares match an independent hashlib implementation
# (tests/stratum/stratum_reference.py), with every share of each header found; extranonce2 and
# ntime roll as documented; bad job files exit 2 naming the field; Ctrl-C stops within a second.
# Usage: tests/cli/test_mine_job.sh path/to/opkit   (exit 77: skipped, no python3)
set -u
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
here=$(realpath "$(dirname "$0")")
data_dir=$(realpath "${OPKIT_TEST_DATA_DIR:-$here/../data}")
checker=$here/../stratum/check_job_shares.py
. "$here/cli_test_lib.sh"
cli_test_begin test_mine_job.sh "$@"
mine() { "$opkit" mine --quiet "$@" >out 2>err </dev/null; rc=$?; }

# Real block 100000: extranonce2 02 is the real coinbase's byte; the share target is the block's.
block=$data_dir/stratum-block-100000.json
for device in host cpu:0; do
  mine --job "$block" --extranonce2 02 --start 273848111 --count 600000 --shares 1 --device "$device"
  check "block 100000 on $device: exit 0" [ "$rc" = 0 ]
  check "block 100000 on $device: the real nonce as mining.submit sends it" \
    grep -qF 'share  ["opkit","block-100000","02","4d1b2237","10572b0f"]  hash 000000000003ba27aa200b1cecaad478d2b00432346c3f1f3986da1afd33e506' out
done

# A synthetic job, fractional difficulty: headers and shares against the hashlib reference, and
# every share of each header searched to the end (brute force over its 20000 nonces).
job=$data_dir/stratum-job.json
mine --job "$job" --count 20000 --shares 7 --json --device host --user w9
check "synthetic job: exit 0" [ "$rc" = 0 ]
check "synthetic job: shares and headers match the reference" python3 "$checker" "$job" out 0 20000
check "synthetic job: worker in mining.submit" grep -q '"submit":\["w9","j7",' out
check "synthetic job: done line" grep -q '"event":"done".*"reason":"shares".*"shares":7' out
mine --job "$job" --start 1000 --count 20000 --shares 3 --json --device cpu:0
check "synthetic job on cpu:0: matches the reference" python3 "$checker" "$job" out 1000 20000

# Rolling: extranonce2 counts up little-endian from --extranonce2 and wraps; once every value was
# searched, ntime moves on by one second while ntime_roll allows, then the job is exhausted.
python3 - "$job" >roll.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j.update(extranonce2_size=1, ntime_roll=1, difficulty=0.001)
print(json.dumps(j))
PY
mine --job roll.json --extranonce2 fe --count 200 --json --device host
check "roll: exhausted after 2 x 256 headers" grep -q '"event":"done".*"headers":512.*"reason":"exhausted"' out
check "roll: extranonce2 fe, ff, then 00" \
  [ "$(grep -o '"event":"header","extranonce2":"[0-9a-f]*"' out | head -3 | cut -d'"' -f8 | tr '\n' ' ')" = "fe ff 00 " ]
check "roll: ntime + 1 after the wrap" [ "$(grep -c '"ntime":"504e86ba"' out)" = 256 ]
check "roll: exit 1 when nothing was found" [ "$rc" = 1 ]

# Bad input: exit 2 and a message naming the field.
bad_job() {  # bad_job LABEL EXPECTED-TEXT PYTHON-EDIT
  local label=$1 expect=$2 edit=$3
  python3 -c "import json,sys; j=json.load(open('$job')); $edit; print(json.dumps(j))" >bad.json
  mine --job bad.json --device host --count 100
  check "$label: exit 2" [ "$rc" = 2 ]
  check "$label: message" grep -q -- "$expect" err
}
bad_job "missing coinb1" "field 'coinb1' is missing" "del j['coinb1']"
bad_job "prevhash not hex" "field 'prevhash' has a non-hex character" "j['prevhash']='zz'+j['prevhash'][2:]"
bad_job "short prevhash" "field 'prevhash' must be 64 hex digits" "j['prevhash']=j['prevhash'][:62]"
bad_job "odd coinb2" "field 'coinb2' has an odd number" "j['coinb2']+='0'"
bad_job "branch not a list" "field 'merkle_branch' must be an array" "j['merkle_branch']='00'"
bad_job "bad nbits" "field 'nbits' must be 8 hex digits" "j['nbits']='1d00ff'"
bad_job "clean_jobs not a bool" "field 'clean_jobs' must be true or false" "j['clean_jobs']='yes'"
bad_job "both targets" "exactly one of the fields 'difficulty'" "j['share_target']='00'*32"
bad_job "zero difficulty" "field 'difficulty' must be > 0" "j['difficulty']=0"
bad_job "extranonce2_size 0" "field 'extranonce2_size' must be 1..32" "j['extranonce2_size']=0"
bad_job "extranonce1 not hex" "field 'extranonce1' has a character other than" "j['extranonce1']='xy'"
bad_job "ntime_roll too far" "ntime_roll' must be 0..7200" "j['ntime_roll']=9000"
mine --job nonexistent.json
check "missing file: exit 2" [ "$rc" = 2 ]
check "missing file: message" grep -q "nonexistent.json" err
echo '{"job_id": ' >notjson.json
mine --job notjson.json
check "not JSON: exit 2" [ "$rc" = 2 ]
check "not JSON: message" grep -q "notjson.json is not JSON" err
python3 -c "import json; j=json.load(open('$job')); print(json.dumps(j)[:-1] + ', \"pad\": 1e999}')" >huge.json
mine --job huge.json
check "a number no double holds: exit 2 (got $rc)" [ "$rc" = 2 ]
check "a number no double holds: not JSON" grep -q "huge.json is not JSON" err
mine --job "$job" --extranonce2 000000
check "extranonce2 of the wrong size: exit 2" [ "$rc" = 2 ]
check "extranonce2 of the wrong size: message" grep -q "must be 2 bytes (the job's extranonce2_size)" err
mine --job "$job" --header 00
check "--job with --header: exit 2" [ "$rc" = 2 ]
mine --job "$job" --shares 0
check "--shares 0: exit 2" [ "$rc" = 2 ]

# Ctrl-C: stops within a second and says where it got to.
python3 -c "import json; j=json.load(open('$job')); j['difficulty']=1e6; print(json.dumps(j))" >hard.json
interrupt_after 1 INT "$opkit" mine --quiet --job hard.json --device host
check "ctrl-c: exit 130" [ "$rc" = 130 ]
check "ctrl-c: stopped within a second (${elapsed_ms} ms)" [ "$elapsed_ms" -lt 1000 ]
check "ctrl-c: where it got to" grep -q "interrupted in job j7 at extranonce2 0000, ntime 504e86b9: nonces \[0, [0-9]*\] of that header were searched" err

cli_test_end
