#!/usr/bin/env bash
# End to end: `opkit lz4` against the system `lz4` both ways, byte for byte: every option
# combination `lz4` writes (-B4..-B7, -BD linked, -BX, --content-size, --no-frame-crc, -l legacy,
# concatenated frames) decodes with `opkit lz4 -d`, and every option combination opkit writes
# decodes with `lz4 -d`; default output names, refusal to overwrite, -f, --rm, -t, stdin/stdout,
# --json, corrupt input (exit 2), on the host engine and the CPU backend's kernels (and the GPU
# when there is one).
# Usage: tests/cli/test_lz4.sh path/to/opkit   (exit 77: skipped, no lz4 tool)
set -u
opkit=$(realpath "${1:?usage: test_lz4.sh path/to/opkit}")
command -v lz4 >/dev/null || { echo "skip: no lz4 tool"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
pass=0
ok() { pass=$((pass + 1)); }
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }
expect() { local label=$1; shift; if "$@"; then ok; else fail "$label"; fi; }

# Inputs: empty, one byte, text around block boundaries, binary, and a repetitive one.
: >empty
printf 'x' >one
for i in $(seq 1 9000); do echo "line $i of the opkit lz4 test: the quick brown fox $((i % 97))"; done >text
head -c 300000 /dev/urandom >random
head -c 200000 "$opkit" >binary
yes abcabcabcabd | head -c 1100000 >repeat
inputs="empty one text random binary repeat"

devices="host cpu"
"$opkit" devices 2>/dev/null | grep -q '^cuda:0' && devices="$devices cuda:0"

# lz4 writes, opkit reads.
for f in $inputs; do
  for opts in "-1" "-1 -B4" "-1 -B5" "-1 -B6" "-1 -B7" "-1 -B4 -BD" "-1 -B4 -BX" "-1 --content-size" \
    "-1 --no-frame-crc" "-1 -B5 -BD -BX --content-size --no-frame-crc" "-l"; do
    lz4 -q -c $opts "$f" >ref.lz4
    for d in $devices; do
      "$opkit" lz4 -d -c --device "$d" ref.lz4 >got 2>err
      expect "lz4 $opts $f -> opkit -d --device $d: $(head -c 200 err)" cmp -s got "$f"
    done
  done
done
# Concatenated frames (a skippable frame between) decode to the concatenation.
lz4 -q -c text >cat.lz4
printf '\x50\x2A\x4D\x18\x02\x00\x00\x00hi' >>cat.lz4
lz4 -q -c -l binary >>cat.lz4
lz4 -q -c -BD repeat >>cat.lz4
cat text binary repeat >cat.expected
"$opkit" lz4 -d -c cat.lz4 >got && expect "concatenated frames" cmp -s got cat.expected

# opkit writes, lz4 reads.
for f in $inputs; do
  for opts in "" "-1 -B4" "-B5" "-B6" "-B7" "-B4 -BX" "--content-size" "--no-frame-crc" "-B4 -BX --content-size --no-frame-crc"; do
    for d in $devices; do
      "$opkit" lz4 -z -c --device "$d" $opts "$f" >mine.lz4 2>err
      lz4 -q -d -c mine.lz4 >got 2>/dev/null
      expect "opkit $opts $f --device $d -> lz4 -d: $(head -c 200 err)" cmp -s got "$f"
    done
  done
done

# Names, overwrite refusal, -f, --rm, -t, stdin/stdout, --json.
cp text t1 && cp binary t2
"$opkit" lz4 -q t1 t2 && expect "FILE.lz4 names" test -s t1.lz4 -a -s t2.lz4 -a -f t1
"$opkit" lz4 -q t1 2>err; rc=$?
expect "refuses to overwrite (exit $rc)" test "$rc" = 2
expect "refusal names the file" grep -q "t1.lz4 already exists" err
"$opkit" lz4 -q -f t1 && ok || fail "-f overwrites"
rm t1 && "$opkit" lz4 -q -d t1.lz4 && expect "-d strips .lz4" cmp -s t1 text
"$opkit" lz4 -q -d -f --rm t2.lz4 && expect "--rm removes the input" test ! -e t2.lz4 -a -f t2
"$opkit" lz4 -q -t t1.lz4 && ok || fail "-t accepts a good file"
ls t1.tmp.* >/dev/null 2>&1 && fail "temporary file left behind" || ok
cat text | "$opkit" lz4 | lz4 -q -d >got && expect "stdin to stdout" cmp -s got text
"$opkit" lz4 -c --json -B4 text 2>/dev/null >/dev/null
"$opkit" lz4 -f --json -B4 text >json && expect "--json bytes_in" grep -q "\"bytes_in\": $(stat -c %s text)," json
expect "--json ratio" grep -q '"ratio"' json

# Corrupt and truncated input: exit 2 with a message naming frame and block, no output file.
lz4 -q -c -BX text >good.lz4
size=$(stat -c %s good.lz4)
head -c $((size - 9)) good.lz4 >trunc.lz4
"$opkit" lz4 -d trunc.lz4 2>err; rc=$?
expect "truncated: exit 2 (got $rc)" test "$rc" = 2
expect "truncated: no output" test ! -e trunc
expect "truncated: message names the frame" grep -q "frame 0" err
cp good.lz4 bad.lz4 && printf '\x00' | dd of=bad.lz4 bs=1 seek=100 conv=notrunc 2>/dev/null
for d in $devices; do
  "$opkit" lz4 -t --device "$d" bad.lz4 2>err; rc=$?
  expect "corrupt block on $d: exit 2 (got $rc)" test "$rc" = 2
  expect "corrupt block on $d: names block 0" grep -q "frame 0, block 0" err
done
"$opkit" lz4 -d -c --max-size 1000 good.lz4 >/dev/null 2>err; rc=$?
expect "--max-size: exit 2 (got $rc)" test "$rc" = 2
cp text notlz4 && "$opkit" lz4 -d notlz4 2>/dev/null; expect "missing suffix: exit 2" test $? = 2

echo "$pass passed, $failures failed (devices: $devices)"
[ "$failures" = 0 ]
