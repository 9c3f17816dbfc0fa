#!/usr/bin/env bash
# Builds tests/consumer (the tutorial as an outside project) against opkit and runs it.
#   run.sh package <opkit build dir>   installs that build to a temporary prefix, checks what was
#                                      installed (headers, library, CLI, package files), then
#                                      builds the consumer with find_package(opkit)
#   run.sh subdirectory                builds the consumer with opkit's source tree as a subproject
# Exit 0 when the tutorial ran and printed what it should; 77 (skip) when it found no device.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
mode=${1:?usage: run.sh package <opkit build dir> | run.sh subdirectory}
work=$(mktemp -d "${TMPDIR:-/tmp}/opkit-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

case "$mode" in
  package)
    build_dir=${2:?run.sh package needs the opkit build directory}
    prefix="$work/prefix"
    cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
    libdir=$(find "$prefix" -name libopkit.a -printf '%h\n' | head -n 1)
    for file in include/opkit/opkit.hpp include/opkit/version.hpp bin/opkit; do
      [ -e "$prefix/$file" ] || { echo "not installed: $file" >&2; exit 1; }
    done
    [ -n "$libdir" ] || { echo "not installed: libopkit.a" >&2; exit 1; }
    for file in opkitConfig.cmake opkitConfigVersion.cmake opkitTargets.cmake; do
      [ -e "$libdir/cmake/opkit/$file" ] || { echo "not installed: $libdir/cmake/opkit/$file" >&2; exit 1; }
    done
    # The installed CLI runs from the prefix and reports the version the package was built as.
    want=$(sed -n 's/^inline constexpr const char\* version = "\(.*\)";$/\1/p' "$prefix/include/opkit/version.hpp")
    got=$("$prefix/bin/opkit" --version)
    [ "$got" = "opkit $want" ] || { echo "installed opkit --version printed '$got', want 'opkit $want'" >&2; exit 1; }
    configure=(-DCMAKE_PREFIX_PATH="$prefix")
    ;;
  subdirectory)
    configure=(-DOPKIT_SOURCE_DIR="$source_dir" -DCMAKE_BUILD_TYPE=Debug)
    ;;
  *)
    echo "run.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac

cmake -S "$here" -B "$work/build" "${generator[@]}" "${configure[@]}" >"$work/configure.log" ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" --target tutorial >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }

status=0
"$work/build/tutorial" >"$work/out.txt" 2>"$work/err.txt" || status=$?
cat "$work/out.txt"
if [ "$status" -eq 77 ]; then
  echo "SKIPPED: no device: $(cat "$work/err.txt")"
  exit 77
fi
[ "$status" -eq 0 ] || { cat "$work/err.txt" >&2; exit 1; }
# The tutorial's kernel doubles the indices 0..255: the last of its 16 lines ends with 510.
grep -q '^device: ' "$work/out.txt" && tail -n 1 "$work/out.txt" | grep -q ' 510$' ||
  { echo "the tutorial's output is not the doubled indices" >&2; exit 1; }
