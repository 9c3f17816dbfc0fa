# same LABEL ARGS...: `opkit hash ARGS` and `sha256sum ARGS` must write the same stdout, the same
# stderr (with the program name replaced) and exit alike; counts a pass or prints what differs.
# Sourced by the hash CLI tests after cli_test_lib.sh. check_escape_fix, when set, is a sed
# script applied to sha256sum's output first (see test_hash.sh's --check cases).
same() {
  local label=$1; shift
  "$opkit" hash "$@" >opkit.out 2>opkit.err </dev/null; local opkit_rc=$?
  sha256sum "$@" >ref.out 2>ref.err </dev/null; local ref_rc=$?
  sed -i 's/^sha256sum: /opkit: /' ref.err
  [ -n "${check_escape_fix:-}" ] && sed -i "$check_escape_fix" ref.out
  if cmp -s opkit.out ref.out && cmp -s opkit.err ref.err && [ "$opkit_rc" = "$ref_rc" ]; then
    pass=$((pass + 1))
  else
    failures=$((failures + 1))
    echo "FAIL: $label (exit opkit $opkit_rc, sha256sum $ref_rc)"
    diff <(cat -A ref.out) <(cat -A opkit.out) | head -10
    diff <(cat -A ref.err) <(cat -A opkit.err) | head -10
  fi
}
