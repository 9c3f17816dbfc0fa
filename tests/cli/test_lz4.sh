#!/usr/bin/env bash
# End to end: `opkit lz4` against the system `lz4` both ways, byte for byte: every option
# combination `lz4` writes (-B4..-B7, -BD linked, -BX, --content-size, --no-frame-crc, -l legacy,
# concatenated frames) decodes with `opkit lz4 -d`, and every option combination opkit writes
# decodes with `lz4 -d`; default output names, refusal to overwrite, -f, --rm, -t, stdin/stdout,
# --json, corrupt input (exit 2), on the host engine and the CPU backend's kernels (and the GPU
# when there is one). Streaming: random files of many batches round trip with `lz4` both ways
# (files and stdin/stdout), peak RSS stays bounded by the batch (/usr/bin/time) on inputs several
# times larger, also for hostile frames (a huge declared content size, endless blocks), and
# Ctrl-C leaves no output behind.
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
"$opkit" lz4 -q -m t1 t2 && expect "-m: FILE.lz4 names" test -s t1.lz4 -a -s t2.lz4 -a -f t1
"$opkit" lz4 -q t1 2>err; rc=$?
expect "refuses to overwrite (exit $rc)" test "$rc" = 2
expect "refusal names the file" grep -q "t1.lz4 already exists" err
"$opkit" lz4 -q -f t1 && ok || fail "-f overwrites"
rm t1 && "$opkit" lz4 -q -d t1.lz4 && expect "-d strips .lz4" cmp -s t1 text
"$opkit" lz4 -q -d -f --rm t2.lz4 && expect "--rm removes the input" test ! -e t2.lz4 -a -f t2
"$opkit" lz4 -q -t t1.lz4 && ok || fail "-t accepts a good file"
ls t1.tmp.* >/dev/null 2>&1 && fail "temporary file left behind" || ok
cat text | "$opkit" lz4 | lz4 -q -d >got && expect "stdin to stdout" cmp -s got text

# IN OUT, as the lz4 tool reads two names.
"$opkit" lz4 -q text named.out && lz4 -q -d -c named.out >got && expect "IN OUT: OUT is the output" cmp -s got text
expect "IN OUT: no IN.lz4 beside it" test ! -e text.lz4
"$opkit" lz4 -q -d named.out named.txt && expect "-d IN OUT" cmp -s named.txt text
"$opkit" lz4 -q text named.out 2>err; rc=$?
test "$rc" = 2 && grep -q "named.out already exists" err && ok || fail "IN OUT: an existing OUT is refused (exit $rc)"
"$opkit" lz4 -q -f text named.out && ok || fail "IN OUT: -f overwrites OUT"
"$opkit" lz4 -q text - | lz4 -q -d >got && expect "IN -: stdout" cmp -s got text
cat text | "$opkit" lz4 -q - named2.lz4 && lz4 -q -d -c named2.lz4 | cmp -s - text && ok || fail "- OUT: stdin to a file"
"$opkit" lz4 -q -f text text 2>err; rc=$?
test "$rc" = 2 && grep -q "both the input and the output" err && cmp -s text t1 && ok || fail "IN IN: refused (exit $rc)"
"$opkit" lz4 -q t1 t2 t3 2>err; rc=$?
test "$rc" = 2 && grep -q -- "-m" err && ok || fail "three names without -m: refused (exit $rc)"
"$opkit" lz4 -q -c text named3 2>err; rc=$?
test "$rc" = 2 && test ! -e named3 && ok || fail "-c with OUT: refused (exit $rc)"
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

# Streaming: inputs of many batches (--batch-mib 4 or 5; blocks straddle the reads), fresh random
# data mixed with text so that blocks are both raw and compressed.
{ head -c 9000000 /dev/urandom; for i in $(seq 1 4); do cat text; done; head -c 6000000 /dev/urandom; yes opkit | head -c 7000000; } >stream
for d in $devices; do
  for opts in "-B7" "-B4 -BX" "-B6 --content-size" "-B5 --no-frame-crc"; do
    for mib in 4 5; do
      "$opkit" lz4 -q -c --batch-mib $mib --device "$d" $opts stream >s.lz4 2>err
      lz4 -q -d -c s.lz4 >got 2>/dev/null
      expect "stream: opkit $opts --batch-mib $mib --device $d -> lz4 -d: $(head -c 200 err)" cmp -s got stream
    done
    lz4 -q -c ${opts/--no-frame-crc/} stream >r.lz4
    "$opkit" lz4 -q -d -c --batch-mib 5 --device "$d" r.lz4 >got 2>err
    expect "stream: lz4 $opts -> opkit -d --batch-mib 5 --device $d: $(head -c 200 err)" cmp -s got stream
  done
  lz4 -q -c -BD -B4 stream | "$opkit" lz4 -q -d --batch-mib 4 --device "$d" | cmp -s - stream
  expect "stream: linked blocks through stdin/stdout on $d" test "${PIPESTATUS[*]}" = "0 0 0"
  cat stream | "$opkit" lz4 -q --batch-mib 4 --device "$d" --content-size | lz4 -q -d | cmp -s - stream
  expect "stream: stdin to stdout on $d (no content size: unknown)" test "${PIPESTATUS[*]}" = "0 0 0 0"
done
"$opkit" lz4 -q -f --batch-mib 4 stream && "$opkit" lz4 -q -d -c stream.lz4 | cmp -s - stream
expect "stream: FILE.lz4 through the temporary" test "${PIPESTATUS[*]}" = "0 0"

# Bounded memory: doubling the input (160 MB, then 320 MB: 40 and 80 batches of 4 MiB) adds
# under 16 MiB to the peak RSS on every engine (the CPU backend's fiber stacks and arenas reach
# their plateau within the first 160 MB; alone it adds under 1 MiB, but on a loaded 2-core
# machine, ctest -j2, one run added 8.2 MiB: a batch or two more in flight when the writer falls
# behind), and the host engine's peak stays under 48 MiB in all.
# A whole-file read would add the file, several times over.
if [ -x /usr/bin/time ]; then
  rss() { /usr/bin/time -f %M -o rss.kb "$@" >/dev/null 2>rss.err; echo "$? $(tail -1 rss.kb)"; }
  { head -c 100000000 /dev/urandom; yes "bounded memory line $RANDOM" | head -c 60000000; } >huge
  cat huge huge >double
  lz4 -q -c -B7 -BX huge >huge.lz4
  lz4 -q -c -B7 -BX double >double.lz4
  for d in $devices; do
    read -r _ base < <(rss "$opkit" lz4 -q -c -B7 --batch-mib 4 --device "$d" huge)
    read -r rc kb < <(rss "$opkit" lz4 -q -c -B7 --batch-mib 4 --device "$d" double)
    expect "bounded: compress 320 MB on $d: exit $rc, $((kb - base)) KiB over 160 MB's peak" \
      test "$rc" = 0 -a $((kb - base)) -lt 16384
    [ "$d" = host ] && expect "bounded: compress on host: $kb KiB peak, under 48 MiB" test "$kb" -lt 49152
    read -r _ base < <(rss "$opkit" lz4 -q -t --batch-mib 4 --device "$d" huge.lz4)
    read -r rc kb < <(rss "$opkit" lz4 -q -t --batch-mib 4 --device "$d" double.lz4)
    expect "bounded: decompress 320 MB on $d: exit $rc, $((kb - base)) KiB over 160 MB's peak" \
      test "$rc" = 0 -a $((kb - base)) -lt 16384
    [ "$d" = host ] && expect "bounded: decompress on host: $kb KiB peak, under 48 MiB" test "$kb" -lt 49152
  done
  # Hostile: a header declaring 2^62 bytes, then 400 copies of a 4 MiB block of zeros (1.6 GiB of
  # output from 6 MB, endless as far as memory is concerned) and no end: streamed in the same
  # bounded memory, then an error.
  head -c 4194304 /dev/zero | lz4 -q -c -B7 --no-frame-crc >zero.lz4
  python3 - <<'PY'
import struct
def xxh32(data, seed=0):
    p1, p2, p3, p4, p5, m = 2654435761, 2246822519, 3266489917, 668265263, 374761393, 0xFFFFFFFF
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & m
    i, n = 0, len(data)
    if n >= 16:
        v = [(seed + p1 + p2) & m, (seed + p2) & m, seed, (seed - p1) & m]
        while i + 16 <= n:
            for k in range(4):
                v[k] = rotl((v[k] + struct.unpack_from('<I', data, i + 4 * k)[0] * p2) & m, 13) * p1 & m
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
    else:
        h = (seed + p5) & m
    h = (h + n) & m
    while i + 4 <= n:
        h = rotl((h + struct.unpack_from('<I', data, i)[0] * p3) & m, 17) * p4 & m
        i += 4
    while i < n:
        h = rotl((h + data[i] * p5) & m, 11) * p1 & m
        i += 1
    h ^= h >> 15; h = h * p2 & m; h ^= h >> 13; h = h * p3 & m; h ^= h >> 16
    return h
zero = open('zero.lz4', 'rb').read()
block = zero[7:-4]  # the frame's one block: size word and data
descriptor = bytes([0x68, 0x70]) + struct.pack('<Q', 1 << 62)
with open('hostile.lz4', 'wb') as f:
    f.write(struct.pack('<I', 0x184D2204) + descriptor + bytes([(xxh32(descriptor) >> 8) & 0xFF]))
    f.write(block * 400)
PY
  read -r rc kb < <(rss "$opkit" lz4 -q -t --batch-mib 4 hostile.lz4)
  expect "hostile frame: exit $rc (want 2), $kb KiB peak, under 48 MiB" test "$rc" = 2 -a "$kb" -lt 49152
  expect "hostile frame: names the truncation" grep -q "truncated" rss.err
  "$opkit" lz4 -q -d -c --max-size 100000000 hostile.lz4 >/dev/null 2>err; rc=$?
  expect "hostile frame: --max-size refuses the content size (exit $rc)" grep -q "exceeds the output limit" err
else
  echo "note: no /usr/bin/time, bounded-memory checks skipped"
fi

# Ctrl-C between batches: exit 130, no output file and no temporary left.
mkfifo slow
timeout 60 "$opkit" lz4 -q -f --batch-mib 1 slow & pid=$!
exec 3>slow
head -c 3000000 /dev/urandom >&3
sleep 1
kill -INT $pid
wait $pid; rc=$?
exec 3>&-
expect "Ctrl-C: exit 130 (got $rc)" test "$rc" = 130
expect "Ctrl-C: no output, no temporary" test ! -e slow.lz4 -a -z "$(ls -A | grep opkit-tmp)"

echo "$pass passed, $failures failed (devices: $devices)"
[ "$failures" = 0 ]
