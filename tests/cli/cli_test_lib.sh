# What every CLI test script does first and last, in one place (source it, do not run it):
#   . "$(dirname "$0")/cli_test_lib.sh"
#   cli_test_begin test_x.sh "$@"        # $opkit: the binary under test; cwd: a scratch folder
#   check "label" [ "$rc" = 0 ]          # counts a pass, or prints FAIL: label
#   cli_test_end                         # prints the counts; the script's exit status
# A script that starts helpers (a test server) names its own clean-up in cli_test_cleanup_hook;
# the scratch folder is removed on any exit.

cli_test_begin() {  # cli_test_begin SCRIPT-NAME PATH-TO-OPKIT
  opkit=$(realpath "${2:?usage: $1 path/to/opkit}")
  work=$(mktemp -d)
  trap cli_test_cleanup EXIT
  cd "$work" || exit 1
  failures=0
  pass=0
}

cli_test_cleanup() {
  if [ -n "${cli_test_cleanup_hook:-}" ]; then eval "$cli_test_cleanup_hook"; fi
  rm -rf "$work"
}

check() {  # check LABEL CONDITION-COMMAND...
  local label=$1
  shift
  if "$@"; then pass=$((pass + 1)); else failures=$((failures + 1)); echo "FAIL: $label"; fi
}

# interrupt_after SECONDS SIGNAL COMMAND...: runs the command in the background with stdout in
# ./out and stderr in ./err, sends it SIGNAL after SECONDS, and waits; sets rc (its exit status)
# and elapsed_ms (from the signal to its exit): how the Ctrl-C / SIGTERM tests measure a stop.
interrupt_after() {
  local seconds=$1 signal=$2
  shift 2
  "$@" >out 2>err </dev/null &
  local pid=$!
  sleep "$seconds"
  kill "-$signal" "$pid"
  local stopped_at
  stopped_at=$(date +%s%N)
  wait "$pid"
  rc=$?
  elapsed_ms=$((($(date +%s%N) - stopped_at) / 1000000))
}

cli_test_end() {
  echo "$pass passed, $failures failed"
  [ "$failures" = 0 ]
}
