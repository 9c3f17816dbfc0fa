#!/usr/bin/env bash
# End to end: `opkit encrypt|decrypt` against `openssl enc` (no salt) byte for byte, both ways,
# for the CTR ciphers and chacha20 on random files (empty, odd sizes, > one 16 MiB piece, stdin
# and stdout), on the host path and the CPU backend's kernel source; AEADs round trip and reject a
# flipped bit with exit 1 and no output file (checked against Python's cryptography when present);
# bad input exits 2.
# Usage: tests/cli/test_cipher.sh path/to/opkit   (exit 77: skipped, no openssl)
set -u
command -v openssl >/dev/null || { echo "skip: no openssl"; exit 77; }
. "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin test_cipher.sh "$@"

ok() { pass=$((pass + 1)); }
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }
expect_rc() {  # expect_rc WANT LABEL CMD...
  local want=$1 label=$2; shift 2
  "$@" >out.txt 2>err.txt </dev/null; local rc=$?
  if [ "$rc" = "$want" ]; then ok; else fail "$label: exit $rc, wanted $want: $(head -c 300 err.txt)"; fi
}

# The devices a cipher runs on here: the host path always; the CPU backend (the kernel source,
# compiled with the host compiler) where that backend works and the cipher has device kernels.
printf x >probe.in
devices_for() {
  local cipher=$1 klen=$2 iv=$3
  if "$opkit" encrypt --cipher "$cipher" -K "$(openssl rand -hex "$klen")" --iv "$(openssl rand -hex "$iv")" \
    --device cpu probe.in probe.bin 2>probe.err; then
    echo "host cpu"
  else
    echo "  ($cipher: no CPU-backend run: $(head -1 probe.err))" >&2
    echo "host"
  fi
}

head -c 0 /dev/urandom >empty.bin
head -c 1 /dev/urandom >one.bin
head -c 1000003 /dev/urandom >odd.bin
head -c $((16 * 1048576 + 4097)) /dev/urandom >big.bin   # two streaming pieces

for cipher in aes-128-ctr aes-192-ctr aes-256-ctr chacha20; do
  case $cipher in aes-128*) klen=16 ;; aes-192*) klen=24 ;; *) klen=32 ;; esac
  devices=$(devices_for "$cipher" $klen 16)
  for file in empty.bin one.bin odd.bin big.bin; do
    for device in $devices; do
      [ "$device" = cpu ] && [ "$file" = big.bin ] && continue  # the CPU backend is slow; odd.bin covers it
      key=$(openssl rand -hex $klen); iv=$(openssl rand -hex 16)
      openssl enc -"$cipher" -K "$key" -iv "$iv" -in "$file" -out ref.bin
      "$opkit" encrypt --cipher "$cipher" -K "$key" --iv "$iv" --device "$device" "$file" mine.bin
      cmp -s ref.bin mine.bin && ok || fail "$cipher $file $device: encrypt differs from openssl enc"
      "$opkit" decrypt --cipher "$cipher" -K "$key" --iv "$iv" --device "$device" <ref.bin >back.bin
      cmp -s "$file" back.bin && ok || fail "$cipher $file $device: decrypt (stdin/stdout) of openssl's output"
      openssl enc -d -"$cipher" -K "$key" -iv "$iv" -in mine.bin -out back2.bin
      cmp -s "$file" back2.bin && ok || fail "$cipher $file $device: openssl enc -d of opkit's output"
    done
  done
done

# A key file holds raw bytes.
key=$(openssl rand -hex 16); iv=$(openssl rand -hex 16)
printf '%s' "$key" | xxd -r -p >key.raw
openssl enc -aes-128-ctr -K "$key" -iv "$iv" -in odd.bin -out ref.bin
"$opkit" encrypt --cipher aes-128-ctr --key-file key.raw --iv "$iv" odd.bin mine.bin
cmp -s ref.bin mine.bin && ok || fail "--key-file"

have_cryptography=0
python3 -c 'import cryptography' 2>/dev/null && have_cryptography=1
for cipher in aes-128-gcm aes-256-gcm chacha20-poly1305; do
  case $cipher in aes-128*) klen=16 ;; *) klen=32 ;; esac
  for device in $(devices_for "$cipher" $klen 12); do
    key=$(openssl rand -hex $klen); nonce=$(openssl rand -hex 12)
    head -c $((RANDOM % 100)) /dev/urandom >aad.bin
    "$opkit" encrypt --cipher "$cipher" -K "$key" --iv "$nonce" --aad-file aad.bin --device "$device" odd.bin sealed.bin
    [ "$(stat -c %s sealed.bin)" = $((1000003 + 16)) ] && ok || fail "$cipher: ciphertext || 16-byte tag"
    if [ $have_cryptography = 1 ]; then
      python3 - "$cipher" "$key" "$nonce" <<'PY' && ok || fail "$cipher $device: cryptography rejects opkit's output"
import sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
cipher, key, nonce = sys.argv[1], bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3])
aead = ChaCha20Poly1305(key) if cipher == "chacha20-poly1305" else AESGCM(key)
plain = aead.decrypt(nonce, open("sealed.bin", "rb").read(), open("aad.bin", "rb").read())
sys.exit(0 if plain == open("odd.bin", "rb").read() else 1)
PY
    fi
    rm -f opened.bin
    "$opkit" decrypt --cipher "$cipher" -K "$key" --iv "$nonce" --aad-file aad.bin --device "$device" sealed.bin opened.bin
    cmp -s odd.bin opened.bin && ok || fail "$cipher $device: round trip"
    "$opkit" encrypt --cipher "$cipher" -K "$key" --iv "$nonce" --aad-file aad.bin --tag-out tag.bin odd.bin ct.bin
    head -c 1000003 sealed.bin | cmp -s - ct.bin && tail -c 16 sealed.bin | cmp -s - tag.bin && ok ||
      fail "$cipher: --tag-out splits the same bytes"
    "$opkit" decrypt --cipher "$cipher" -K "$key" --iv "$nonce" --aad-file aad.bin --tag-in tag.bin ct.bin opened2.bin
    cmp -s odd.bin opened2.bin && ok || fail "$cipher: --tag-in"
    for offset in 0 500000 1000002 1000010; do  # ciphertext bits and tag bits
      cp sealed.bin forged.bin
      printf '\x01' | dd of=forged.bin bs=1 seek=$offset conv=notrunc 2>/dev/null
      cmp -s forged.bin sealed.bin && printf '\x02' | dd of=forged.bin bs=1 seek=$offset conv=notrunc 2>/dev/null
      rm -f forged.out
      expect_rc 1 "$cipher forged byte $offset" "$opkit" decrypt --cipher "$cipher" -K "$key" --iv "$nonce" \
        --aad-file aad.bin --device "$device" forged.bin forged.out
      grep -q "authentication failed" err.txt && ok || fail "$cipher: no 'authentication failed' message"
      [ ! -e forged.out ] && ok || fail "$cipher: output written despite a bad tag"
    done
    printf 'x' >>aad.bin
    expect_rc 1 "$cipher altered AAD" "$opkit" decrypt --cipher "$cipher" -K "$key" --iv "$nonce" --aad-file aad.bin \
      sealed.bin forged.out
  done
done

# Bad input: exit 2, and the key never in the message.
secret=000102030405060708090a0b0c0d0e
expect_rc 2 "short key" "$opkit" encrypt --cipher aes-128-ctr -K "$secret" --iv "$(openssl rand -hex 16)" odd.bin x.bin
grep -q "$secret" err.txt && fail "key digits in the error message" || ok
expect_rc 2 "non-hex key" "$opkit" encrypt --cipher aes-128-ctr -K "${secret}zz" --iv "$(openssl rand -hex 16)" odd.bin x.bin
grep -q "$secret" err.txt && fail "key digits in the error message" || ok
expect_rc 2 "odd hex iv" "$opkit" encrypt --cipher aes-128-ctr -K "${secret}ff" --iv abc odd.bin x.bin
expect_rc 2 "12-byte iv for ctr" "$opkit" encrypt --cipher aes-128-ctr -K "${secret}ff" --iv "$(openssl rand -hex 12)" odd.bin x.bin
expect_rc 2 "missing input" "$opkit" encrypt --cipher aes-128-ctr -K "${secret}ff" --iv "$(openssl rand -hex 16)" nope.bin x.bin
expect_rc 2 "unknown cipher" "$opkit" encrypt --cipher aes-128-cbc -K "${secret}ff" --iv "$(openssl rand -hex 16)" odd.bin x.bin
expect_rc 2 "no key" "$opkit" encrypt --cipher aes-128-ctr --iv "$(openssl rand -hex 16)" odd.bin x.bin
expect_rc 2 "empty gcm nonce" "$opkit" encrypt --cipher aes-128-gcm -K "${secret}ff" --iv "" odd.bin x.bin
expect_rc 2 "short sealed input" "$opkit" decrypt --cipher chacha20-poly1305 -K "$(openssl rand -hex 32)" \
  --iv "$(openssl rand -hex 12)" one.bin x.bin
expect_rc 2 "unknown device" "$opkit" encrypt --cipher chacha20 -K "$(openssl rand -hex 32)" \
  --iv "$(openssl rand -hex 16)" --device tpu:0 odd.bin x.bin
[ ! -e x.bin ] && ok || fail "bad input left an output file"

# --json: one object with bytes, seconds, GB/s.
"$opkit" encrypt --cipher chacha20 -K "$(openssl rand -hex 32)" --iv "$(openssl rand -hex 16)" --json odd.bin j.bin >j.json
python3 -c 'import json,sys; d=json.load(open("j.json")); sys.exit(0 if d["bytes"]==1000003 and "gb_per_s" in d else 1)' &&
  ok || fail "--json report"

echo "cipher CLI: $pass passed, $failures failed"
[ "$failures" = 0 ]
