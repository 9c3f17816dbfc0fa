# Sourced by the LZ4 device scripts (lz4.sh, lz4_tables.sh): builds the three 256 MiB corpora in
# /tmp/lz4_corpora once per machine and sets C (their folder) and FILES (their paths).
#   mixed.bin  the files under /usr/lib and /usr/share concatenated, first 256 MiB
#   python.txt every *.py file on the root file system concatenated (repeated up to 256 MiB if fewer)
#   logs.txt   256 MiB of generated log lines (awk, fixed seed): highly compressible
# Reproducible from the machine's own files (sorted by path, LC_ALL=C).
C=/tmp/lz4_corpora
mkdir -p $C
limit=$((256 << 20))
[ -s $C/mixed.bin ] || find /usr/lib /usr/share -type f -size +0 2>/dev/null | sort | xargs -d '\n' cat 2>/dev/null | head -c $limit >$C/mixed.bin
# Python sources: every *.py on the root file system; where they come to less than 256 MiB (27 MiB
# on the GPU image), the concatenation repeats until 256 MiB: 64 KiB blocks are independent, so a
# repeat changes no block's ratio, and the GPU gets 4096 blocks as with the other corpora.
if [ ! -s $C/python.txt ]; then
  find / -xdev -type f -name '*.py' 2>/dev/null | sort | xargs -d '\n' cat 2>/dev/null | head -c $limit >$C/python.once
  [ -s $C/python.once ] && { while cat $C/python.once; do :; done 2>/dev/null | head -c $limit >$C/python.txt; }
  rm -f $C/python.once
fi
[ -s $C/logs.txt ] || awk 'BEGIN { srand(42); split("GET POST PUT DELETE", m, " "); split("200 200 200 304 404 500", s, " ");
  for (i = 0; ; i++) { printf "2026-12-03T%02d:%02d:%02d.%03dZ host%02d %s /api/v1/items/%d status=%s bytes=%d ms=%.1f\n",
    (i / 3600000) % 24, (i / 60000) % 60, (i / 1000) % 60, i % 1000, int(rand() * 16), m[1 + int(rand() * 4)],
    int(rand() * 5000), s[1 + int(rand() * 6)], int(rand() * 100000), rand() * 250 } }' | head -c $limit >$C/logs.txt
FILES="$C/mixed.bin $C/python.txt $C/logs.txt"
