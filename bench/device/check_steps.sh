# Sourced by the step-by-step device scripts (stream_order_check.sh, host_tags_check.sh,
# gcm_tail_check.sh, ...): where logs go ($L, packed into $OUT/SCRIPT-logs.tgz by `pack`: the device tool
# returns few files), the build folder, and one-line summaries of each step (`at`: seconds since
# the start; `summary LOG`: gtest's verdict and compute-sanitizer's error or hazard count).
# Installs the LZ4 operator's libxxhash-dev from the .deb files carried in .deps/ where the GPU
# image lacks it.
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
L=$(mktemp -d)
export PATH=/usr/local/cuda/bin:$PATH LC_ALL=C OPKIT_CACHE_DIR=${OPKIT_CACHE_DIR:-/tmp/opkit-cache}
B=build/release
T0=$SECONDS
at() { echo "[$((SECONDS - T0)) s]"; }
summary() { grep -E "^\[  (PASSED|FAILED)|ERROR SUMMARY|RACECHECK SUMMARY" "$1" | tr '\n' ' '; }
pack() { mkdir -p "$OUT" && tar czf "$OUT/$(basename "$0" .sh)-logs.tgz" -C "$L" .; }  # one archive a script
if ! [ -e /usr/include/xxhash.h ] && ls .deps/*.deb >/dev/null 2>&1; then dpkg -i .deps/*.deb >/dev/null 2>&1; fi
