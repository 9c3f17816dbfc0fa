#!/usr/bin/env bash
# End to end: `opkit hash` against coreutils' sha256sum, byte for byte (stdout, stderr with the
# program name replaced, exit status), on files with awkward names, stdin, missing files, a
# directory, --check with good, bad and malformed lines, and --lines on the CPU and (when there
# is one) the GPU.
# Usage: tests/cli/test_hash.sh path/to/opkit   (exit 77: skipped, no sha256sum)
set -u
command -v sha256sum >/dev/null || { echo "skip: no sha256sum"; exit 77; }
. "$(dirname "$0")/cli_test_lib.sh"
. "$(dirname "$0")/sha256sum_same.sh"
cli_test_begin test_hash.sh "$@"
check_escape_fix=""  # a sed script for the reference output of --check; see below

# Files: empty, small, exactly one block, a few MiB (streamed), awkward names.
: >empty
printf 'abc' >abc
head -c 64 /dev/urandom >block64
head -c $((3 * 1024 * 1024 + 17)) /dev/urandom >big
printf 'x' >'with space'
printf 'y' >'back\slash'
printf 'z' >"$(printf 'new\nline')"
printf 'w' >"$(printf 'carriage\rreturn')"
printf 'q' >"it's"
mkdir adir

same "plain files" empty abc block64 big
same "names with a space, backslash, newline, carriage return, quote" 'with space' 'back\slash' "$(printf 'new\nline')" "$(printf 'carriage\rreturn')" "it's"
same "missing file and directory among good ones" abc missing adir 'no such file' empty
"$opkit" hash - <abc >opkit.out; sha256sum - <abc >ref.out
check "stdin as -" cmp -s opkit.out ref.out
"$opkit" hash <abc >opkit.out; sha256sum <abc >ref.out
check "stdin when no file is named" cmp -s opkit.out ref.out

# --check: all good; then mismatches, unreadable files and malformed lines; escaped names;
# BSD-style lines; CRLF line ends; upper-case hex; comments.
sha256sum empty abc big 'with space' 'back\slash' "$(printf 'new\nline')" >good.sums
# Current coreutils (9.4 on Ubuntu 24.04) escape a checked name that holds a backslash
# (`\back\\slash: OK`), as opkit does; 9.1 (Debian 12) prints it raw. Against such a sha256sum, that
# one line of its output is compared in the escaped form.
sha256sum 'back\slash' >probe.sums
if [ "$(sha256sum -c probe.sums 2>/dev/null)" = 'back\slash: OK' ]; then
  echo "note: $(sha256sum --version | head -1) prints checked names with a backslash unescaped"
  check_escape_fix='s/^back\\slash: /\\back\\\\slash: /'
fi
same "--check, all OK" -c good.sums
same "--check --quiet" -c --quiet good.sums
cp good.sums bad.sums
printf '%s  abc\n' 0000000000000000000000000000000000000000000000000000000000000000 >>bad.sums
printf 'garbage line\n%s  missing\nshort  abc\n' e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 >>bad.sums
same "--check with a mismatch, a missing file and malformed lines" -c bad.sums
same "--check --status" -c --status bad.sums
{
  printf 'SHA256 (abc) = %s\n' "$(sha256sum abc | cut -c1-64)"
  printf '%s *abc\r\n' "$(sha256sum abc | cut -c1-64 | tr a-f A-F)"
  printf '# a comment\n'
} >mixed.sums
same "--check with BSD lines, binary marker, CRLF, upper case, comments" -c mixed.sums
printf 'nothing useful\n' >useless.sums
same "--check with no properly formatted line" -c useless.sums
same "--check of a missing sums file" -c missing.sums

# --lines: each line one message (no trailing newline on the last line, empty lines, CRs kept).
printf 'first\n\nthird line\r\nlast without newline' >lines.txt
expected_lines() {  # the reference: sha256sum of each line, one per line
  local algo=$1
  while IFS= read -r line || [ -n "$line" ]; do
    if [ "$algo" = sha256d ]; then
      printf '%s' "$line" | sha256sum | cut -c1-64 | xxd -r -p | sha256sum | cut -c1-64
    else
      printf '%s' "$line" | sha256sum | cut -c1-64
    fi
  done <"$1_input"
}
cp lines.txt sha256_input
cp lines.txt sha256d_input
expected_lines sha256 >ref.out
"$opkit" hash --lines --device host lines.txt >opkit.out
check "--lines on the CPU" cmp -s opkit.out ref.out
if command -v xxd >/dev/null; then
  expected_lines sha256d >ref.out
  "$opkit" hash --lines --algo sha256d --device host lines.txt >opkit.out
  check "--lines --algo sha256d on the CPU" cmp -s opkit.out ref.out
fi

# Many lines through small batches (lines cross batch boundaries), against awk + sha256sum on a
# sample, and the line count.
awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++) { n = int(rand() * 90); s = ""; for (j = 0; j < n; j++) s = s sprintf("%c", 32 + int(rand() * 95)); print s } }' >many.txt
"$opkit" hash --lines --device host --batch-mib 1 many.txt >cpu.out
check "--lines prints one digest per line" [ "$(wc -l <cpu.out)" = 200000 ]
for n in 1 2 777 123456 200000; do
  line=$(sed -n "${n}p" many.txt)
  want=$(printf '%s' "$line" | sha256sum | cut -c1-64)
  check "--lines digest of line $n" [ "$(sed -n "${n}p" cpu.out)" = "$want" ]
done
# --device cpu: the SHA-256 kernel source on the CPU backend, byte for byte what the host prints.
head -n 3000 many.txt >some.txt
"$opkit" hash --lines --device host some.txt >some_host.out
"$opkit" hash --lines --device cpu --algo sha256 some.txt >some_cpu.out
check "--lines --device cpu (the kernel on the CPU backend) matches the host" cmp -s some_cpu.out some_host.out
"$opkit" hash --lines --device tpu some.txt >/dev/null 2>err.txt; rc=$?
check "--lines --device tpu: exit 2 naming the value and the choices" \
  [ "$rc" = 2 ] && grep -q "'tpu' is not a device for opkit hash; use one of: auto, host, cuda" err.txt
"$opkit" hash --lines --device host - <many.txt >stdin.out
check "--lines from stdin" cmp -s stdin.out cpu.out
"$opkit" hash --lines --device host many.txt missing >two.out 2>two.err; rc=$?
check "--lines with a missing input: error line, exit 1, other input hashed" \
  [ "$rc" = 1 -a "$(cat two.err)" = "opkit: missing: No such file or directory" -a "$(wc -l <two.out)" = 200000 ]

if "$opkit" hash --lines --device cuda empty >/dev/null 2>&1; then
  "$opkit" hash --lines --device cuda --batch-mib 1 many.txt >gpu.out
  check "--lines on the GPU equals the CPU" cmp -s gpu.out cpu.out
  "$opkit" hash --lines --device cuda --algo sha256d lines.txt >opkit.out
  "$opkit" hash --lines --device host --algo sha256d lines.txt >ref.out
  check "--lines sha256d on the GPU equals the CPU" cmp -s opkit.out ref.out
else
  echo "note: no CUDA GPU, --lines --device cuda not tested"
fi

"$opkit" hash --algo md5 abc >/dev/null 2>&1; rc=$?
check "unknown --algo is a usage error (exit 2)" [ "$rc" = 2 ]

cli_test_end
