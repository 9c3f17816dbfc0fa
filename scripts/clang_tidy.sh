#!/usr/bin/env bash
# Runs clang-tidy (the checks in .clang-tidy) over the C++ sources of src/, tools/, python/src and
# tests/, as the release build compiles them (its compile_commands.json; the Python bindings' from
# the Python build when there is one). Exits non-zero on any finding; where clang-tidy is not
# installed, says so and exits 0.
#   CLANG_TIDY=path     the clang-tidy to use (default: clang-tidy, or clang-tidy-NN on PATH)
#   OPKIT_TIDY_JOBS=N   parallel clang-tidy processes (default: nproc)
#   scripts/clang_tidy.sh [FILE...]   only these files
set -euo pipefail
cd "$(dirname "$0")/.."

tidy=${CLANG_TIDY:-}
if [ -z "$tidy" ]; then
  for candidate in clang-tidy clang-tidy-{19,18,17,16,15,14}; do
    if command -v "$candidate" >/dev/null; then
      tidy=$candidate
      break
    fi
  done
fi
if [ -z "$tidy" ]; then
  echo "clang-tidy: not installed, skipped"
  exit 0
fi

build=build/release
if [ ! -f "$build/compile_commands.json" ]; then
  cmake --preset release >/dev/null
fi
jobs=${OPKIT_TIDY_JOBS:-$(nproc)}

# The files of one compilation database that lie in the folders checked (nothing generated: the
# embedded-source file lives in the build folder), or those of the command line.
files_of() {
  python3 - "$1" "$PWD" "${@:2}" <<'PY'
import json, os, sys
database, root, wanted = sys.argv[1], sys.argv[2], sys.argv[3:]
folders = ("src/", "tools/", "python/src/", "tests/")
for entry in json.load(open(database)):
    path = os.path.relpath(os.path.join(entry["directory"], entry["file"]), root)
    if path.startswith(folders) and (not wanted or path in wanted):
        print(path)
PY
}

# clang 14 cannot parse libstdc++'s std::source_location: see scripts/clang_tidy_compat.hpp.
args=(--quiet "--extra-arg=-include$PWD/scripts/clang_tidy_compat.hpp" --extra-arg=-Wno-unknown-warning-option)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
run() {  # database folder, files...
  local db=$1
  shift
  [ $# -gt 0 ] || return 0
  echo "clang-tidy ($("$tidy" --version | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)): $# files with $db, $jobs at a time"
  printf '%s\n' "$@" | xargs -P "$jobs" -n 2 "$tidy" -p "$db" "${args[@]}" >>"$log" 2>&1 || status=1
}

mapfile -t main_files < <(files_of "$build/compile_commands.json" "$@")
run "$build" "${main_files[@]}"
python_db=$(find build/python -maxdepth 2 -name compile_commands.json 2>/dev/null | head -1 || true)
if [ -n "$python_db" ]; then
  mapfile -t python_files < <(files_of "$python_db" "$@" | grep '^python/src/' || true)
  run "$(dirname "$python_db")" "${python_files[@]}"
else
  echo "clang-tidy: python/src skipped (no Python build yet: scripts/python_test.sh makes one)"
fi

# clang-tidy's own chatter ("N warnings generated.") is not a finding.
grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$log" || true
if [ "$status" -ne 0 ]; then
  echo "clang-tidy: findings above (fix them, or NOLINT(check) with the reason on the line)" >&2
  exit 1
fi
echo "clang-tidy: clean"
