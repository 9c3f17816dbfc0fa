#!/usr/bin/env bash
# sha256sum parity (issue 16): the options coreutils' sha256sum has and `opkit hash` promises
# (-z, --tag, -b/-t, --strict, -w, --ignore-missing), the sums-file forms coreutils 9.x accepts in
# --check (a tab separator, BSD `SHA256 (f) = ...` lines, the first line's form deciding how later
# lines are read), the quoting of names that are not UTF-8, and `--json`. Each case compares stdout,
# stderr (program name replaced) and the exit status with sha256sum run on the same arguments.
# Usage: tests/cli/test_hash_parity.sh path/to/opkit   (exit 77: skipped, no sha256sum)
set -u
command -v sha256sum >/dev/null || { echo "skip: no sha256sum"; exit 77; }
. "$(dirname "$0")/cli_test_lib.sh"
. "$(dirname "$0")/sha256sum_same.sh"
cli_test_begin test_hash_parity.sh "$@"


printf 'abc' >abc
printf 'x' >"$(printf 'new\nline')"
latin1=$(printf 'caf\351')  # not UTF-8
printf 'y' >"$latin1"
digest_abc=$(sha256sum abc | cut -c1-64)

# Output forms.
same "-z (NUL-terminated lines, names unescaped)" -z abc "$(printf 'new\nline')"
same "--tag (BSD lines)" --tag abc "$latin1"
same "--tag -z" --tag -z abc
same "-b and -t are accepted" -b abc
same "-t" -t abc
same "a missing name that is not UTF-8 is quoted as sha256sum quotes it" abc "missing-$latin1"

# --check: the accepted forms.
sha256sum abc >gnu.sums
sha256sum --tag abc >bsd.sums
printf '%s\tabc\n' "$digest_abc" >tab.sums
cat bsd.sums gnu.sums >bsd_first.sums
cat gnu.sums bsd.sums >gnu_first.sums
printf '%s  abc\0' "$digest_abc" >zero.sums
same "-c of a GNU line" -c gnu.sums
same "-c of a BSD line" -c bsd.sums
same "-c of a tab separator" -c tab.sums
same "-c: the first line (BSD) decides how later lines are read" -c bsd_first.sums
same "-c: the first line (GNU) decides how later lines are read" -c gnu_first.sums
# sha256sum refuses -z with -c (a usage error, its exit 1); opkit too, with its bad-input status 2.
"$opkit" hash -c -z zero.sums >/dev/null 2>err.txt
rc=$?
if [ "$rc" = 2 ] && grep -q -- "--zero" err.txt; then pass=$((pass + 1)); else failures=$((failures + 1)); echo "FAIL: -c -z (exit $rc)"; fi

# --check: --strict, --warn, --ignore-missing.
{ cat gnu.sums; echo "not a sums line"; } >malformed.sums
{ cat gnu.sums; printf '%s  gone\n' "$digest_abc"; } >missing.sums
printf '%s  gone\n' "$digest_abc" >all_missing.sums
same "-c with a malformed line" -c malformed.sums
same "-c --strict: a malformed line fails" -c --strict malformed.sums
same "-c -w: a malformed line is named" -c -w malformed.sums
same "-c of a missing file" -c missing.sums
same "-c --ignore-missing" -c --ignore-missing missing.sums
same "-c --ignore-missing when nothing is verified" -c --ignore-missing all_missing.sums

# --json (the README's machine-readable switch): valid JSON, the digests sha256sum prints, and
# names that are not UTF-8 replaced rather than failing.
"$opkit" hash --json abc "$latin1" >out.json 2>err.txt
rc=$?
if [ "$rc" = 0 ] && python3 - "$digest_abc" <<'PY'; then pass=$((pass + 1)); else failures=$((failures + 1)); echo "FAIL: --json (exit $rc: $(head -c 200 err.txt))"; fi
import json, sys
files = json.load(open("out.json"))["files"]
assert files[0] == {"file": "abc", "digest": sys.argv[1]}, files
assert files[1]["file"] == "caf\ufffd", files
PY

cli_test_end
