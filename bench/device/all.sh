#!/usr/bin/env bash
# One GPU-machine session: build once, then every part's device script, each with its own output
# folder and time limit, and hashcat side by side; everything is packed into $OUT/results.tgz
# after every step (the device tool returns at most 8 files, and a call cut short keeps what was
# packed), with the machine and hashcat summaries beside it.
#   PARTS="core sha256 pow" HASHCAT="1400" HASHCAT_AFTER=pow bash bench/device/all.sh
#   (default PARTS: every bench/device/*.sh but all.sh and verify.sh; TIMEOUT_<part>=SECONDS overrides PART_TIMEOUT)
set -uo pipefail
OUT=${OUT:-/tmp/opkit-out}
WORK=/tmp/opkit-device
rm -rf "$WORK"; mkdir -p "$WORK" "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
parts=${PARTS:-$(ls bench/device/*.sh | xargs -n1 basename | sed 's/\.sh$//' | grep -v -e '^all$' -e '^verify$')}
pack() { tar -C "$WORK" -czf "$OUT/results.tgz" . && cp "$WORK"/*.txt "$OUT/" 2>/dev/null; }
run_hashcat() {
  [ -n "${HASHCAT:-}" ] && [ -d .anchor ] || return 0
  echo "===== hashcat"
  bash .anchor/hashcat-anchor run "$PWD/.anchor" $HASHCAT 2>&1 | tee "$WORK/hashcat.txt"
  pack
}
{
  echo "commit: $(cat .commit 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
} | tee "$WORK/machine.txt"
cmake --preset release -DOPKIT_WERROR=OFF >/dev/null && cmake --build --preset release -j 16 2>&1 | tail -2
for part in $parts; do
  echo "===== $part"
  mkdir -p "$WORK/$part"
  limit_var="TIMEOUT_$part"
  OUT="$WORK/$part" timeout "${!limit_var:-${PART_TIMEOUT:-300}}" bash "bench/device/$part.sh" >"$WORK/$part/log.txt" 2>&1
  echo "exit $?" >>"$WORK/$part/log.txt"
  tail -"${TAIL:-25}" "$WORK/$part/log.txt"
  pack
  [ "${HASHCAT_AFTER:-}" = "$part" ] && run_hashcat
done
[ -z "${HASHCAT_AFTER:-}" ] && run_hashcat
pack
ls -la "$OUT"
