#!/usr/bin/env bash
# End-to-end test of `opkit devices`: one line per device of every available backend, a reason for
# each backend without devices, the same in --json, and exit 0 exactly when something is listed.
# Usage: test_devices.sh /path/to/opkit
set -u
OPKIT=$(realpath "${1:?usage: test_devices.sh /path/to/opkit}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

"$OPKIT" devices >text.txt 2>err.txt
status=$?
"$OPKIT" devices --json >json.txt 2>>err.txt
json_status=$?
[ "$status" == "$json_status" ] || fail "text and --json exit differently ($status vs $json_status)"
[ -s err.txt ] && fail "devices wrote to stderr: $(cat err.txt)"

listed=$(grep -c -E '^(cuda|cpu):[0-9]+ ' text.txt)
if [ "$listed" -gt 0 ]; then
  [ "$status" == 0 ] || fail "devices listed but exit $status"
else
  [ "$status" == 1 ] || fail "nothing listed but exit $status"
fi
# Every backend is either listed or explained.
for backend in cuda cpu; do
  if ! grep -q "^$backend:0 " text.txt; then
    grep -q "^$backend: no devices (.\+)" text.txt || fail "$backend is neither listed nor explained: $(cat text.txt)"
  fi
done
# GPUs come first.
if grep -q '^cuda:0 ' text.txt && grep -q '^cpu:0 ' text.txt; then
  [ "$(grep -n '^cuda:0 ' text.txt | cut -d: -f1)" -lt "$(grep -n '^cpu:0 ' text.txt | cut -d: -f1)" ] ||
    fail "the CPU is listed before the GPUs"
fi
grep -q '^cuda:0 .*sm_[0-9]\+, [0-9]\+ SMs, [0-9.]\+ GiB' text.txt || ! grep -q '^cuda:0 ' text.txt ||
  fail "the GPU line lacks arch, SMs or memory: $(grep '^cuda:0' text.txt)"

if command -v python3 >/dev/null; then
  python3 - "$listed" json.txt <<'EOF' || fail "--json does not match the text listing: $(cat json.txt)"
import json, sys
listed = int(sys.argv[1])
d = json.load(open(sys.argv[2]))
assert len(d["devices"]) == listed, (len(d["devices"]), listed)
assert {b["backend"] for b in d["backends"]} == {"cuda", "cpu"}
for b in d["backends"]:
    assert b["available"] == any(x["backend"] == b["backend"] for x in d["devices"]), b
    assert b["available"] or b["reason"], b
for x in d["devices"]:
    assert x["id"] == "%s:%d" % (x["backend"], x["ordinal"])
    assert x["name"] and x["arch"] and x["compute_units"] > 0 and x["total_memory"] > 0, x
    if x["backend"] == "cuda":
        assert x["arch"].startswith("sm_"), x
EOF
else
  grep -q '"devices"' json.txt || fail "--json lacks devices"
fi

[ $failures -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ok: opkit devices ($listed listed)"
