// LZ4 block decompression, one thread block of LZ4K_DECODE_THREADS (one warp) per LZ4 block, many
// blocks in parallel. A block is a chain of sequences (literals, then a match that repeats earlier
// output), so the decoder works window by window: the threads stage the next LZ4K_WINDOW_BYTES of
// the block in shared memory with one load each, find every sequence that starts in the window
// together, then check and copy them in groups of up to LZ4K_GROUP sequences.
//
// The parse is speculative, as parallel CSV and UTF-8 parsers find record starts: thread t owns
// window positions [16t, 16t + 16) and, for each, works out where the next token would be if a
// token started there (the length extensions included), without knowing which positions are real
// tokens. Most positions need only their own byte: without a length extension (a literal nibble
// below 15 and a match nibble below 15) the next token is 3 + the literal length on, so thread t
// works its 16 out from one 16-byte load. The rest (about one in eight of compressed bytes) are
// spread over the threads in window order and read their extensions through a mask of the
// window's 255 bytes (where each run ends). Before, every position took the whole computation
// through a table of run ends: 79 + 53 instructions a position in the SASS (sm_90), against ~14
// now and ~71 for each extended one, most of a dense window's parse (the corpora's mixed binaries
// have ~47 windows a 64 KiB block, counted on the CPU backend). A token whose lengths or next
// token it cannot resolve inside the window and the block (a length
// extension past the window, a literal run or offset past the block's end: its last sequence or a
// truncation) is "unresolved". Thread t then memoises its segment right to left: where the chain
// leaves the segment from each position, and which positions it steps on there (a 16-bit mask).
// From the window's first byte (always a real token) the threads follow those exits through at
// most 32 segments, each taking the mask of the segment it owns; a prefix sum of the masks' counts
// gives every sequence its index. The chain ends where it leaves the window (the next window starts
// there) or at an unresolved token, which one thread then parses exactly and serially as a
// one-thread decoder would (every read checked against the block's end, bytes past the window from
// global memory; its lengths clamped, a literal run to the block's size + 1, a match to 2^32 - 1,
// so that 32-bit sums only wrap past a sequence that fails). The next window starts after it, so
// each byte is staged and speculated on once: linear work, whatever the input.
//
// A group: thread s re-reads sequence s's lengths (resolved: from the window and its 255 mask), a
// prefix sum of the output lengths gives each sequence its output position, then thread s reads its
// offset and checks its sequence in the order a serial parse would (truncated input, output
// overflow, the block's last sequence, zero or too-far offset, ending with a match, a match within
// the input margins liblz4 keeps at a block's end); the group stops at its lowest-numbered
// problem (an atomicMin of s << 3 | status), and groups run in order, so the status is the one an
// in-order parse reports, and a group with a problem copies nothing.
//
// A sequence may read output of earlier sequences only once they are written, so the group is cut
// into epochs, each behind a barrier: a new epoch starts at a sequence whose match source overlaps
// the output of an earlier sequence of the current epoch. Thread s finds the latest earlier
// sequence its match reads (a binary search over the group's output positions); while the threads
// copy epoch e they find where epoch e + 1 ends (a ballot: the first sequence that reads one of e +
// 1's), so no thread walks the group again. An epoch whose literal runs and matches are all at
// most LZ4K_SHORT bytes (most of them: a dense block's epoch is a few sequences of a few bytes) is
// copied with the threads spread over its output, one byte each a step: the byte's sequence from a
// mask of the step's sequence starts, its source a literal (read from the input) or the byte a
// match repeats (m % offset of the `offset` bytes before the match, by Lemire's multiply from a
// constant each sequence's thread works out once, not a division a byte), which is output of an
// earlier epoch or the sequence's own literals, read from the input too; a byte's sequence takes
// one 16-byte load (Lz4Lane). 53 instructions a step in the SASS (74 with a division and four
// loads); two steps' loads go before their stores (LZ4K_LANE_STEPS), as no byte of an epoch is
// another's source. An epoch with a longer part is
// copied by sequence: thread s copies each short sequence s on its own, a few bytes at a time with
// all loads before all stores (the compiler cannot prove that the pointers differ, so a plain loop
// would wait out each load before its store; a source in its own literals or match needs no
// barrier, as the same thread wrote it), then each long one is copied by all threads together. A
// group's last epoch ends behind a barrier too, so a later group (and the next window) reads its
// output. Hostile blocks stop at the first problem with a status code (lz4_status.h); nothing is
// read or written outside [in, in + stored) and [out, out + cap).
//
// Measured (H100, 2026-12-07 night, bench/results/2026-12-07-night-decoder-lanes.md, the kernel
// on 256 MiB corpora at 64 KiB blocks): the byte-spread epochs with ballots and LZ4K_SHORT 128
// decode 89.8 / 115.6 / 154.9 GB/s (binaries / Python / logs) against 61.3 / 93.6 / 150.6 for one
// thread a sequence with shared-memory atomics; staging a group's output in shared memory and
// following sources back through the group (no epochs) were slower and are gone. The parse's
// split (tokens without extensions from their own byte) and the one-load, no-division step came
// after that run (2026-12-08) and are counted here, not yet timed.
//
// Two forms, like lz4_compress.cu's: on a GPU (LZ4K_WARP_EXCHANGE) the threads exchange prefix sums
// and masks through warp intrinsics and order shared memory with __syncwarp; the CPU backend
// refuses warp intrinsics (its threads run one after another, switching only at __syncthreads), so
// there the same steps go through shared memory and __syncthreads. Both give every thread the same
// values (tests/unit/test_lz4_kernels.cpp runs the warp form on the CPU backend with the intrinsics
// emulated).
//
// Launch: block = LZ4K_DECODE_THREADS (32) threads, grid = count. Block i reads
// in[in_offsets[i], + in_lengths[i] & 0x7FFFFFFF) (bit 31: stored raw) and writes
// out[out_offsets[i], + out_caps[i]); its decoded size goes to sizes[i], its status to status[i].
#include "lz4_copy.cuh"
#include "lz4_status.h"

#ifdef LZ4K_WARP_EMULATION
#include "lz4_warp_emulation.h"
#define LZ4K_WARP_EXCHANGE
#elif defined(__CUDA_ARCH__)
#define LZ4K_WARP_EXCHANGE
#endif

#define LZ4K_DECODE_THREADS 32u
#define LZ4K_WINDOW_BYTES 512u  // 16 positions a thread: the parse's masks are 16 bits
#define LZ4K_SEGMENT (LZ4K_WINDOW_BYTES / LZ4K_DECODE_THREADS)
// A sequence takes at least 3 bytes (a token and an offset; only the block's last one has none).
#define LZ4K_WINDOW_SEQUENCES ((LZ4K_WINDOW_BYTES + 2u) / 3u)
#define LZ4K_GROUP 32u  // one sequence per thread
// The speculative parse's "no next token it can vouch for"; window-relative positions are below it.
#define LZ4K_UNRESOLVED 0xFFFFu
// Longest literal run or match of an epoch copied byte-spread (or, beside a longer one, by its own
// thread); longer ones are copied by all threads together. (H100, 2026-12-07 night: 32 / 64 / 128
// decoded binaries at 87.1 / 89.2 / 89.8 GB/s, Python sources at 111.7 / 114.6 / 115.6.)
#ifndef LZ4K_SHORT
#define LZ4K_SHORT 128u
#endif
// Steps of a byte-spread epoch (32 bytes each) whose loads go before their stores.
#ifndef LZ4K_LANE_STEPS
#define LZ4K_LANE_STEPS 2u
#endif
// Bytes a thread loads before it stores them when it copies alone.
#ifndef LZ4K_CHUNK
#define LZ4K_CHUNK 8u
#endif
// The same for each thread when all copy a long part: more than 8 spills registers (64 at most).
#define LZ4K_LONG_UNROLL 8u

// A sequence's lengths and where they lead: literals from window position `from`, then a match of
// `match` bytes (with the 4 the format adds), then the next token at window position `next`.
struct Lz4Sequence {
  unsigned int literals, from, match, next;
};

// A short sequence of a group as lz4k_copy_epoch_lanes reads it, in one 16-byte load: where its
// output starts, its literal bytes (at most LZ4K_SHORT) and match offset, where its literals are
// read, and Lemire's constant for `% offset` (the epoch's matches are at most LZ4K_SHORT bytes).
struct __align__(16) Lz4Lane {
  unsigned int start;
  unsigned int literals_offset;  // literals | offset << 16
  unsigned int from;
  unsigned int modulus;  // 0xFFFFFFFF / offset + 1: m % offset == __umulhi(m * modulus, offset) for m < 4096
};
#if LZ4K_SHORT >= 4096
#error "LZ4K_SHORT must be below 4096 (Lz4Lane's modulus) and 65536 (its literals)"
#endif

// One window and the group being copied, shared by the block's threads. Sequence s of a group
// writes its literals at out[s] and then its match; the group writes [out[0], out[count]).
struct __align__(16) Lz4Window {
  // Per window position p: the position of the next token if a token started at p, or
  // LZ4K_UNRESOLVED (lz4k_speculate). Thread t's 16 are one 32-byte row.
  unsigned short nexts[LZ4K_WINDOW_BYTES];
  // in[lo, lo + n), and room for the speculation's reads one past the window's end (16 bytes, so
  // that the group's Lz4Lane records after it stay 16-byte aligned).
  unsigned char window[LZ4K_WINDOW_BYTES + 16u];
  union {
    // The speculation, per position p: where the chain from p leaves p's segment (low 16 bits;
    // LZ4K_UNRESOLVED where it ends at an unresolved token), and the positions it steps on in the
    // segment (high 16 bits, bit i: the segment's position i). Dead once the chain is followed.
    unsigned int exits[LZ4K_WINDOW_BYTES];
    // Before the memo: the window positions whose speculation needs a length extension, in order.
    unsigned short extended[LZ4K_WINDOW_BYTES];
    struct {
      Lz4Lane lane[LZ4K_GROUP];                     // what a byte-spread copy needs of each sequence
      unsigned short token[LZ4K_WINDOW_SEQUENCES];  // window position of the window's sequence i
      unsigned int out[LZ4K_GROUP + 1];             // output position of group sequence s's literals
      unsigned int literals[LZ4K_GROUP];            // literal bytes (0 past the group)
      unsigned int from[LZ4K_GROUP];                // their input position
      unsigned int match[LZ4K_GROUP];               // match bytes (0: the block's last sequence)
      unsigned int offset[LZ4K_GROUP];              // match offset
    } group;
  };
  // Bit i of entry j: window position 16j + i holds a byte other than 255 or lies at or past n
  // (entry 32, past the window, is all ones): where a length extension's run of 255s ends.
  unsigned short not255[LZ4K_DECODE_THREADS + 1u];
  unsigned int lanes[LZ4K_DECODE_THREADS];  // the CPU form's exchanges
  unsigned int sequences;                   // in the window
  unsigned int next;                        // the input position after them: the next window's start
  unsigned int exact_index;                 // the window's sequence parsed exactly (its last, unresolved), or ~0
  unsigned int exact_literals, exact_from, exact_match, exact_match_cut;  // its fields
  unsigned int problem;  // (s << 3 | status) of the group's first bad sequence, or ~0
  unsigned int done;     // the group ends with the block's last sequence
};

// Orders the block's shared (and global) memory: the block is one warp.
__device__ __forceinline__ void lz4k_sync() {
#ifdef LZ4K_WARP_EXCHANGE
  __syncwarp(0xFFFFFFFFu);
#else
  __syncthreads();
#endif
}

// Every thread: the sum of `v` over the threads before it; *total gets the sum over all.
__device__ __forceinline__ unsigned int lz4k_exclusive_sum(Lz4Window& b, unsigned int v, unsigned int t,
                                                           unsigned int* total) {
#ifdef LZ4K_WARP_EXCHANGE
  unsigned int x = v;
#pragma unroll
  for (unsigned int d = 1; d < LZ4K_DECODE_THREADS; d <<= 1) {
    const unsigned int y = __shfl_up_sync(0xFFFFFFFFu, x, d);
    if (t >= d) x += y;
  }
  *total = __shfl_sync(0xFFFFFFFFu, x, LZ4K_DECODE_THREADS - 1u);
  return x - v;
#else
  b.lanes[t] = v;
  __syncthreads();
  unsigned int before = 0, all = 0;
  for (unsigned int u = 0; u < LZ4K_DECODE_THREADS; ++u) {
    before += u < t ? b.lanes[u] : 0u;
    all += b.lanes[u];
  }
  __syncthreads();
  *total = all;
  return before;
#endif
}

// Every thread: the threads' `pred`, bit u for thread u.
__device__ __forceinline__ unsigned int lz4k_ballot(Lz4Window& b, bool pred, unsigned int t) {
#ifdef LZ4K_WARP_EXCHANGE
  (void)b, (void)t;
  return __ballot_sync(0xFFFFFFFFu, pred);
#else
  b.lanes[t] = pred ? 1u : 0u;
  __syncthreads();
  unsigned int bits = 0;
  for (unsigned int u = 0; u < LZ4K_DECODE_THREADS; ++u) bits |= b.lanes[u] << u;
  __syncthreads();
  return bits;
#endif
}

// Every thread: the OR of `v` over the threads (one reduction from sm_80, a butterfly before).
__device__ __forceinline__ unsigned int lz4k_or(Lz4Window& b, unsigned int v, unsigned int t) {
#if defined(LZ4K_WARP_EXCHANGE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  (void)b, (void)t;
  for (unsigned int step = 16; step > 0; step >>= 1) v |= __shfl_xor_sync(0xFFFFFFFFu, v, step);
  return v;
#elif defined(LZ4K_WARP_EXCHANGE)
  (void)b, (void)t;
  return __reduce_or_sync(0xFFFFFFFFu, v);
#else
  b.lanes[t] = v;
  __syncthreads();
  unsigned int all = 0;
  for (unsigned int u = 0; u < LZ4K_DECODE_THREADS; ++u) all |= b.lanes[u];
  __syncthreads();
  return all;
#endif
}

// Every thread: the lowest thread whose `value` is above `bound`, else `none`.
__device__ __forceinline__ unsigned int lz4k_first_above(Lz4Window& b, unsigned int value, unsigned int bound,
                                                         unsigned int none, unsigned int t) {
  const unsigned int above = lz4k_ballot(b, value > bound, t);
  return above != 0u ? (unsigned int)__ffs((int)above) - 1u : none;
}

// The first window position >= q (q <= LZ4K_WINDOW_BYTES) whose byte is not 255, or q itself from
// n on (>= n where the window's 255s run to its end): where a length extension at q ends. A run of
// 255s past the rest of q's 16 positions takes one more step a 16 (the entry past the window stops
// it).
__device__ __forceinline__ unsigned int lz4k_run_end(const Lz4Window& b, unsigned int q) {
  unsigned int entry = q / 16u, bits = (unsigned int)b.not255[entry] >> (q % 16u);
  while (bits == 0u) {
    ++entry;
    q = entry * 16u;
    bits = b.not255[entry];
  }
  return q + (unsigned int)__ffs((int)bits) - 1u;
}

// The sequence whose token would be at window position p, if the window and the block vouch for
// its lengths and its next token; returns that token's position, else LZ4K_UNRESOLVED (an extension
// that runs to the window's end, a literal run that ends at or past the block's end less 2: the
// block's last sequence or a truncation; a next token 64 KiB on). n: the window's bytes, avail: the
// block's bytes from the window's start. Branch-free but for the run ends (a lane's run of 255s past
// its 16-position mask entry, rare): the window's parse calls it for the positions whose token
// needs an extension (lz4k_mark), the groups for their tokens. On a real token that it resolves it
// gives the exact parse's lengths (its extensions end in the window, so nothing in them is cut).
__device__ __forceinline__ unsigned int lz4k_speculate(const Lz4Window& b, unsigned int p, unsigned int n,
                                                       unsigned int avail, Lz4Sequence* s) {
  const unsigned int token = b.window[p];
  const unsigned int run = lz4k_run_end(b, p + 1u);  // where a literal length's extension would end
  const bool literal_ext = token >= 0xF0u, match_ext = (token & 15u) == 15u;
  s->literals = literal_ext ? 15u + 255u * (run - p - 1u) + b.window[run] : token >> 4;
  s->from = literal_ext ? run + 1u : p + 1u;
  const unsigned int at = s->from + s->literals + 2u;  // after the offset; < 2^18
  const unsigned int match_run = lz4k_run_end(b, at < LZ4K_WINDOW_BYTES ? at : LZ4K_WINDOW_BYTES);
  s->match = match_ext ? 19u + 255u * (match_run - at) + b.window[match_run] : (token & 15u) + 4u;
  s->next = match_ext ? match_run + 1u : at;
  const bool unresolved =
      (literal_ext && run >= n) || at > avail || (match_ext && match_run >= n) || s->next >= LZ4K_UNRESOLVED;
  return unresolved ? LZ4K_UNRESOLVED : s->next;
}

// The top bit of each byte of x that is 255: its low 7 bits plus 1 carry into bit 7 only then
// (never into the next byte).
__device__ __forceinline__ unsigned int lz4k_bytes_255(unsigned int x) {
  return ((x & 0x7F7F7F7Fu) + 0x01010101u) & x & 0x80808080u;
}

// Bits 7, 15, 23 and 31 of m as bits 0 to 3 (the multiply's other terms land on distinct bits
// below 28, so nothing carries into them).
__device__ __forceinline__ unsigned int lz4k_byte_flags(unsigned int m) {
  return (m * 0x00204081u) >> 28;
}

// Thread t's part of the window's speculation, positions p = s0 + k of its segment (k < 16): its
// not255 entry, and for each p with a token of neither length extension (most of them: their
// next token is p + 3 + the literal length, no further bytes needed), nexts[p] as lz4k_speculate
// gives it; returns the mask of the segment's positions left to lz4k_speculate (before n only).
// A word of 4 bytes at a time: one 16-byte load, masks from carries, the nexts two to a word
// (every 16-bit half below 2^16: no carry between them), two 16-byte stores.
__device__ __forceinline__ unsigned int lz4k_mark(Lz4Window& b, unsigned int s0, unsigned int n, unsigned int avail,
                                                  unsigned int t) {
  unsigned int bytes[4], nexts[8];
  lz4k_load16(&b.window[s0], bytes);
  unsigned int is255 = 0, extended = 0;
#pragma unroll
  for (unsigned int w = 0; w < 4u; ++w) {
    const unsigned int x = bytes[w];
    is255 |= lz4k_byte_flags(lz4k_bytes_255(x)) << (4u * w);
    extended |= lz4k_byte_flags(lz4k_bytes_255(x | 0x0F0F0F0Fu) | lz4k_bytes_255(x | 0xF0F0F0F0u)) << (4u * w);
    const unsigned int literal_nibbles = x >> 4 & 0x0F0F0F0Fu;
    const unsigned int p = s0 + 4u * w + 3u;  // a token at s0 + 4w: its next token if it has no literals
    nexts[2u * w] = __byte_perm(literal_nibbles, 0u, 0x4140u) + (p | (p + 1u) << 16);
    nexts[2u * w + 1u] = __byte_perm(literal_nibbles, 0u, 0x4342u) + ((p + 2u) | (p + 3u) << 16);
  }
  if (s0 + LZ4K_SEGMENT + 17u > avail) {  // near the block's end: a next token past it is unresolved
#pragma unroll
    for (unsigned int k = 0; k < LZ4K_SEGMENT; ++k) {
      const unsigned int shift = 16u * (k % 2u);
      if ((nexts[k / 2u] >> shift & 0xFFFFu) > avail) nexts[k / 2u] |= 0xFFFFu << shift;
    }
  }
  lz4k_store16(&b.nexts[s0], nexts[0], nexts[1], nexts[2], nexts[3]);
  lz4k_store16(&b.nexts[s0 + 8u], nexts[4], nexts[5], nexts[6], nexts[7]);
  const unsigned int before_n = n >= s0 + LZ4K_SEGMENT ? 0xFFFFu : n > s0 ? (1u << (n - s0)) - 1u : 0u;
  b.not255[t] = (unsigned short)(~is255 | ~before_n);  // from n on: "not 255"
  if (t == 0) b.not255[LZ4K_DECODE_THREADS] = 0xFFFFu;
  return extended & before_n;
}

// The block's bytes as one thread reads them past the speculation: the window [lo, lo + n) where it
// has them, else global memory.
struct Lz4Reader {
  const Lz4Window& b;
  const unsigned char* in;
  unsigned int lo, n;

  __device__ __forceinline__ unsigned int operator[](unsigned int p) const {
    const unsigned int d = p - lo;  // p >= lo: the parse only moves forward
    return d < n ? b.window[d] : in[p];
  }
};

// Adds the 255-run length extension at in[*ip..] to *length; 0 when the input ends first.
__device__ __forceinline__ int lz4k_extend(const Lz4Reader& in, unsigned int end, unsigned int* ip,
                                           unsigned long long* length) {
  unsigned int b;
  do {
    if (*ip >= end) return 0;
    b = in[(*ip)++];
    *length += b;
  } while (b == 255u);
  return 1;
}

// One thread: the exact parse of the unresolved token at window position d (the window's last
// sequence), as a serial decoder reads it; every read bounded by the block's end. A literal run
// whose extension or bytes run past the block becomes one of stored + 1 bytes (its check reports
// the truncation first); a match whose extension runs past it sets exact_match_cut.
__device__ __forceinline__ void lz4k_parse_exact(Lz4Window& b, const Lz4Reader& in, unsigned int stored,
                                                 unsigned int d) {
  const unsigned int token = b.window[d];
  unsigned int p = in.lo + d + 1u;
  unsigned long long l = token >> 4, m = token & 15u;
  b.exact_match_cut = 0;
  b.exact_match = 0;
  b.next = stored;
  b.exact_from = p;
  if (l == 15u && !lz4k_extend(in, stored, &p, &l)) {
    b.exact_literals = stored + 1u;
    return;
  }
  b.exact_from = p;
  if (l > stored - p) {
    b.exact_literals = stored + 1u;
    return;
  }
  b.exact_literals = (unsigned int)l;
  p += (unsigned int)l + 2u;
  if (m == 15u && !lz4k_extend(in, stored, &p, &m)) {
    b.exact_match_cut = 1;
    return;
  }
  m += 4u;
  b.exact_match = m < 0xFFFFFFFFull ? (unsigned int)m : 0xFFFFFFFFu;
  b.next = p;
}

// Thread s: checks its sequence in the order a serial parse would and fills in its offset; returns
// LZ4K_OK or the problem, and sets *last for the block's last sequence (literals only). `next`:
// where the next token is; match_cut: the match's length runs past the block.
__device__ __forceinline__ unsigned int lz4k_check(const Lz4Reader& in, unsigned int end, unsigned int cap,
                                                   unsigned int op, unsigned int from, unsigned int literals,
                                                   unsigned int match, unsigned int next, unsigned int match_cut,
                                                   unsigned int* offset, int* last) {
  if (literals > end - from) return LZ4K_INPUT_TRUNCATED;
  if (literals > cap - op) return LZ4K_OUTPUT_OVERFLOW;
  const unsigned int at = from + literals, match_at = op + literals;
  if (at == end) {
    *last = 1;
    return LZ4K_OK;
  }
  if (end - at < 2u) return LZ4K_INPUT_TRUNCATED;
  *offset = in[at] | in[at + 1u] << 8;
  if (*offset == 0u) return LZ4K_ZERO_OFFSET;
  if (*offset > match_at) return LZ4K_BAD_OFFSET;
  if (match_cut) return LZ4K_INPUT_TRUNCATED;
  if (match > cap - match_at) return LZ4K_OUTPUT_OVERFLOW;
  if (next == end) return LZ4K_ENDS_WITH_MATCH;  // a block must end with literals
  // The format's "the last 5 bytes are literals", on the input as liblz4 checks it: a sequence
  // with a match leaves at least 8 bytes after its literals (offset, next token, 5) and at least 5
  // after its match length; liblz4 rejects a block that does not.
  if (end - at < 8u || end - next < 5u) return LZ4K_SHORT_TAIL;
  return LZ4K_OK;
}

// Where literals at input position `from` are read from: the window [lo, lo + n) where it holds
// all of them, else the input.
__device__ __forceinline__ const unsigned char* lz4k_literal_source(const Lz4Window& b, const unsigned char* in,
                                                                    unsigned int lo, unsigned int n, unsigned int from,
                                                                    unsigned int literals) {
  const unsigned int w = from - lo;
  return w < n && literals <= n - w ? &b.window[w] : in + from;
}

// One thread: min(n, LZ4K_CHUNK) bytes from `from` to `to`, every load before the first store.
__device__ __forceinline__ void lz4k_copy_chunk(unsigned char* to, const unsigned char* from, unsigned int n) {
  unsigned char v[LZ4K_CHUNK];
#pragma unroll
  for (unsigned int u = 0; u < LZ4K_CHUNK; ++u) v[u] = u < n ? from[u] : 0;
#pragma unroll
  for (unsigned int u = 0; u < LZ4K_CHUNK; ++u)
    if (u < n) to[u] = v[u];
}

// One thread: the match of `n` bytes at `to` whose source starts `offset` bytes before it. Byte m
// repeats byte m % offset of the source, so where offset < LZ4K_CHUNK the first chunk is copied
// byte by byte with that index, and every later byte from a whole number of periods back, at
// least a chunk back: in a chunk the thread stored earlier, never in the one it is loading.
__device__ __forceinline__ void lz4k_copy_match_alone(unsigned char* to, unsigned int offset, unsigned int n) {
  unsigned int m = 0, back = offset;
  if (offset < LZ4K_CHUNK) {
    const unsigned char* source = to - offset;
    unsigned char v[LZ4K_CHUNK];
    unsigned int r = 0;  // m % offset, kept without a division
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_CHUNK; ++u) {
      v[u] = u < n ? source[r] : 0;
      r = r + 1u == offset ? 0u : r + 1u;
    }
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_CHUNK; ++u)
      if (u < n) to[u] = v[u];
    m = LZ4K_CHUNK;
    back = r == 0u ? LZ4K_CHUNK : LZ4K_CHUNK + offset - r;  // the least multiple of offset >= LZ4K_CHUNK
  }
  for (; m < n; m += LZ4K_CHUNK) lz4k_copy_chunk(to + m, to + m - back, n - m);
}

// All threads: the match of `n` bytes at `to` whose source starts `offset` bytes before it (its
// bytes lie before `to`: the caller made them visible). Byte m repeats source byte m % offset;
// thread t's bytes are m = t, t + threads, ..., so that index moves by threads % offset a step.
__device__ __forceinline__ void lz4k_copy_match_together(unsigned char* to, unsigned int offset, unsigned int n,
                                                         unsigned int t) {
  const unsigned int threads = LZ4K_DECODE_THREADS;
  if (offset >= n) {  // no overlap: a plain copy
    lz4k_copy<LZ4K_LONG_UNROLL>(to, to - offset, n, t, threads);
    return;
  }
  const unsigned char* source = to - offset;
  unsigned int r = offset > threads ? t : t % offset;
  const unsigned int step = offset > threads ? threads : threads % offset;
  lz4k_copy_with<LZ4K_LONG_UNROLL>(
      to,
      [source, step, offset, &r](unsigned int) {
        const unsigned char byte = source[r];
        r += step;
        if (r >= offset) r -= offset;
        return byte;
      },
      n, t, threads);
}

// All threads: group sequence s, a long one: its literals, then (behind a barrier when the match
// reads them) its match.
__device__ __forceinline__ void lz4k_copy_long(const Lz4Window& b, unsigned int s, const unsigned char* in,
                                               unsigned int lo, unsigned int n, unsigned char* out, unsigned int t) {
  const unsigned int op = b.group.out[s], literals = b.group.literals[s], offset = b.group.offset[s],
                     match = b.group.match[s];
  lz4k_copy<LZ4K_LONG_UNROLL>(out + op, lz4k_literal_source(b, in, lo, n, b.group.from[s], literals), literals, t,
                              LZ4K_DECODE_THREADS);
  if (match == 0u) return;
  const unsigned int match_at = op + literals, source = match_at - offset;
  if (source + (match < offset ? match : offset) > op) lz4k_sync();  // it reads the literals
  lz4k_copy_match_together(out + match_at, offset, match, t);
}

// All threads: the epoch [first, end) of short sequences, the threads spread over its output, one
// byte each a step (an epoch of a dense block is a few sequences of a few bytes: one thread a
// sequence would leave most threads idle, each running its sequence's copy loops). Byte m of a
// match repeats byte m % offset of the `offset` bytes before the match: the sequence's own
// literals, which this step may be writing and so are read from the input, or output of an
// earlier epoch (the epoch rule), written behind a barrier. Literals come from global memory
// rather than the window: one kind of load, no branch (the window was staged through L1 a moment
// ago). A byte's sequence is the last one starting at or before it: each sequence's thread puts its
// start in a mask of the step's 32 bytes, and the steps before counted theirs. Only the block's
// last sequence can be empty (no literals, no match), and it starts at the epoch's end, past every
// byte, so the starts of the bytes' sequences are distinct.
__device__ __forceinline__ void lz4k_copy_epoch_lanes(Lz4Window& b, unsigned int first, unsigned int end,
                                                      const unsigned char* in, unsigned char* out, unsigned int t) {
  const unsigned int lo_out = b.group.out[first], hi_out = b.group.out[end];
  const bool member = t >= first && t < end;
  const unsigned int start = member ? b.group.out[t] : 0u;
  unsigned int before = first;  // the sequences that start before this step
  for (unsigned int base = lo_out; base < hi_out; base += LZ4K_DECODE_THREADS * LZ4K_LANE_STEPS) {
    // LZ4K_LANE_STEPS steps' loads before their stores: no byte of the epoch is the source of
    // another (the epoch rule), so the loads need not wait for the stores, and a warp left alone
    // on its SM (a dense block, the last to finish) waits out one load's latency, not one a step.
    unsigned char byte[LZ4K_LANE_STEPS];
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_LANE_STEPS; ++u) {
      const unsigned int step = base + u * LZ4K_DECODE_THREADS;
      if (step >= hi_out) break;  // the same for every thread
      const unsigned int rel = start - step;
      const unsigned int starts = lz4k_or(b, member && rel < LZ4K_DECODE_THREADS ? 1u << rel : 0u, t);
      const unsigned int q = step + t;
      if (q < hi_out) {
        const unsigned int s = before + (unsigned int)__popc((int)(starts & (0xFFFFFFFFu >> (31u - t)))) - 1u;
        unsigned int lane[4];  // Lz4Lane
        lz4k_load16(&b.group.lane[s], lane);
        const unsigned int start_s = lane[0], literals = lane[1] & 0xFFFFu, offset = lane[1] >> 16;
        unsigned int at = q - start_s;  // the byte's place in the sequence
        bool earlier = false;           // at: an output position of an earlier epoch (else an input position)
        if (at >= literals) {
          const unsigned int m = at - literals;
          at = start_s + literals - offset + __umulhi(m * lane[3], offset);
          earlier = at < start_s;
          if (!earlier) at -= start_s;  // in the literals
        }
        if (!earlier) at += lane[2];
        byte[u] = (earlier ? out : in)[at];
      }
      before += (unsigned int)__popc((int)starts);
    }
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_LANE_STEPS; ++u) {
      const unsigned int q = base + u * LZ4K_DECODE_THREADS + t;
      if (q < hi_out) out[q] = byte[u];
    }
  }
}

// 32 blocks per SM (the hardware's most) at 64 registers a thread.
extern "C" __global__ void __launch_bounds__(LZ4K_DECODE_THREADS, 32)
    lz4_decompress(const unsigned char* in_base, const unsigned long long* in_offsets, const unsigned int* in_lengths,
                   unsigned char* out_base, const unsigned long long* out_offsets, const unsigned int* out_caps,
                   unsigned int* sizes, unsigned int* status) {
  const unsigned int block = blockIdx.x;
  const unsigned int t = threadIdx.x;
  const unsigned char* in = in_base + in_offsets[block];
  unsigned char* out = out_base + out_offsets[block];
  const unsigned int stored = in_lengths[block] & 0x7FFFFFFFu;
  const unsigned int cap = out_caps[block];

  if (in_lengths[block] & 0x80000000u) {  // stored raw
    const int fits = stored <= cap;
    if (fits) lz4k_copy(out, in, stored, t, LZ4K_DECODE_THREADS);
    if (t == 0) {
      sizes[block] = fits ? stored : 0u;
      status[block] = fits ? LZ4K_OK : LZ4K_OUTPUT_OVERFLOW;
    }
    return;
  }

  __shared__ Lz4Window b;
  if (t == 0) b.done = 0;
  // Every thread keeps the same copy of these: the next window's start, the output so far, the
  // problem found (never read from shared memory after another thread may have moved on).
  unsigned int lo = 0, op = 0, problem = ~0u;
  for (;;) {
    // Stage the window: one load per thread per 32 bytes, all in flight at once.
    const unsigned int avail = stored - lo;
    const unsigned int n = avail < LZ4K_WINDOW_BYTES ? avail : LZ4K_WINDOW_BYTES;
    if (n == 0u) {  // no token
      problem = LZ4K_INPUT_TRUNCATED;
      break;
    }
    lz4k_copy(b.window, in + lo, n, t, LZ4K_DECODE_THREADS);
    lz4k_sync();
    const unsigned int s0 = t * LZ4K_SEGMENT;
    const unsigned int s1 = s0 + LZ4K_SEGMENT < n ? s0 + LZ4K_SEGMENT : n;  // s1 <= s0 past the window

    // The speculation: lz4k_speculate's next token for every position before n, those of tokens
    // without a length extension from their segment's thread (lz4k_mark), the others spread over
    // the threads in window order (about one position in eight: a warp of positions each taking
    // the whole computation, as before, mostly spent it on lanes that did not need it).
    {
      const unsigned int extended = lz4k_mark(b, s0, n, avail, t);
      unsigned int count;
      unsigned int i = lz4k_exclusive_sum(b, (unsigned int)__popc((int)extended), t, &count);
      for (unsigned int bits = extended; bits != 0u; bits &= bits - 1u)
        b.extended[i++] = (unsigned short)(s0 + (unsigned int)__ffs((int)bits) - 1u);
      lz4k_sync();
      for (unsigned int j = t; j < count; j += LZ4K_DECODE_THREADS) {
        const unsigned int p = b.extended[j];
        Lz4Sequence unused;
        b.nexts[p] = (unsigned short)lz4k_speculate(b, p, n, avail, &unused);
      }
      lz4k_sync();
    }

    // Its memo, right to left: the chain from p leaves the segment where the chain from its next
    // token does, if that lies in the segment (read back: written a step before). Positions from
    // n on get entries too, never read: their next lies past s1 (a next token is at least 3 on),
    // and the chain stops at n.
    if (s1 > s0) {
      unsigned int nexts[LZ4K_SEGMENT / 2u];
      lz4k_load16(&b.nexts[s0], nexts);
      lz4k_load16(&b.nexts[s0 + 8u], nexts + 4);
#pragma unroll
      for (unsigned int k = LZ4K_SEGMENT; k-- > 0u;) {
        const unsigned int next = nexts[k / 2u] >> (16u * (k % 2u)) & 0xFFFFu;
        const unsigned int here = 1u << (16u + k);
        b.exits[s0 + k] = next < s1 ? (b.exits[next] | here) : (next | here);
      }
    }
    lz4k_sync();

    // The chain, every thread alike: from position 0 through the segments' exits; each thread keeps
    // the mask of its own segment (none: the chain passes it by). It ends where it leaves the
    // window, at `exit` (resolved), or at an unresolved token (exit = LZ4K_UNRESOLVED, >= n).
    unsigned int at = 0, mine = 0, exit;
    for (;;) {
      const unsigned int word = b.exits[at];
      if (at / LZ4K_SEGMENT == t) mine = word >> 16;
      exit = word & 0xFFFFu;
      if (exit >= n) break;
      at = exit;
    }
    lz4k_sync();  // b.exits is read; the group's arrays take its place

    // Each sequence's index: the tokens of the threads before, in window order.
    unsigned int count_all;
    unsigned int i = lz4k_exclusive_sum(b, (unsigned int)__popc((int)mine), t, &count_all);
    for (unsigned int bits = mine; bits != 0u; bits &= bits - 1u)
      b.group.token[i++] = (unsigned short)(s0 + (unsigned int)__ffs((int)bits) - 1u);
    const Lz4Reader reader = {b, in, lo, n};
    if (at / LZ4K_SEGMENT == t) {  // the chain's last segment: its last token is this thread's highest
      b.sequences = count_all;
      b.exact_index = exit == LZ4K_UNRESOLVED ? count_all - 1u : ~0u;
      b.next = lo + exit;
      if (exit == LZ4K_UNRESOLVED) lz4k_parse_exact(b, reader, stored, s0 + 31u - (unsigned int)__clz((int)mine));
    }
    lz4k_sync();

    // The groups, in order.
    // (Values that stay the same through the window are read from shared memory where needed: the
    // registers go to the copies.)
    for (unsigned int g0 = 0; g0 < b.sequences && problem == ~0u; g0 += LZ4K_GROUP) {
      const unsigned int count = b.sequences - g0 < LZ4K_GROUP ? b.sequences - g0 : LZ4K_GROUP;
      // Thread s: sequence s's lengths (an unresolved one's from its exact parse), then the output
      // positions (a prefix sum of literals + match; 32-bit, wrapping only past a sequence that fails).
      unsigned int literals = 0, from = 0, match = 0, next = 0, match_cut = 0;
      if (t < count) {
        const unsigned int d = b.group.token[g0 + t];
        if (g0 + t == b.exact_index) {
          literals = b.exact_literals;
          from = b.exact_from;
          match = b.exact_match;
          next = b.next;
          match_cut = b.exact_match_cut;
        } else {
          Lz4Sequence q;
          lz4k_speculate(b, d, n, avail, &q);  // resolved: the chain stepped on from it
          literals = q.literals;
          from = lo + q.from;
          match = q.match;
          next = lo + q.next;
        }
      }
      unsigned int total;
      const unsigned int out_at = op + lz4k_exclusive_sum(b, literals + match, t, &total);
      if (t < count) b.group.out[t] = out_at;
      if (t == 0) {
        b.group.out[count] = op + total;
        b.problem = ~0u;
      }
      op += total;
      lz4k_sync();
      // Thread s: its checks, and the latest earlier sequence of the group whose output its match
      // reads (dependency: that sequence + 1, 0 if none).
      unsigned int dependency = 0;
      bool is_long = false;
      if (t < count) {
        unsigned int offset = 0;
        int last = 0;
        const unsigned int status =
            lz4k_check(reader, stored, cap, out_at, from, literals, match, next, match_cut, &offset, &last);
        if (status != LZ4K_OK) atomicMin(&b.problem, t << 3 | status);
        if (last) {
          match = 0;
          b.group.out[t + 1u] = out_at + literals;  // the sum counted a match
          b.done = 1;
        }
        b.group.literals[t] = literals;
        b.group.from[t] = from;
        b.group.match[t] = match;
        b.group.offset[t] = offset;
        lz4k_store16(&b.group.lane[t], out_at, (literals < 0xFFFFu ? literals : 0xFFFFu) | offset << 16, from,
                     0xFFFFFFFFu / (offset != 0u ? offset : 1u) + 1u);  // Lz4Lane
        is_long = literals > LZ4K_SHORT || match > LZ4K_SHORT;
        // The bytes its match reads before its own output, [source, limit), from the group's output?
        const unsigned int source = out_at + literals - offset, overlap = match < offset ? match : offset;
        const unsigned int limit = source + overlap < out_at ? source + overlap : out_at;
        if (status == LZ4K_OK && match != 0u && source < out_at && limit > b.group.out[0]) {
          // The last sequence j < t with out[j] < limit (out[0] is). The index never passes t - 1,
          // not even for a load whose value is then not used: the block's last sequence may be
          // rewriting out[count] meanwhile (above).
          unsigned int j = 0;
#pragma unroll
          for (unsigned int step = LZ4K_GROUP / 2u; step != 0u; step >>= 1) {
            const unsigned int k = j + step < t ? j + step : j;
            if (b.group.out[k] < limit) j = k;
          }
          dependency = j + 1u;
        }
      }
      // Every thread holds the group's long sequences and the first epoch's end.
      const unsigned int long_ones = lz4k_ballot(b, is_long, t);
      unsigned int next_end = lz4k_first_above(b, dependency, 0u, count, t);
      lz4k_sync();
      problem = b.problem;
      if (problem != ~0u) break;
      // Epoch by epoch: an epoch [first, end) ends before the first sequence whose match reads
      // output of a sequence of the epoch (dependency > first); the threads find the next epoch's
      // end with a ballot of their dependencies. An epoch without long parts is copied with the
      // threads spread over its bytes (lz4k_copy_epoch_lanes); one with long parts, each short
      // sequence by its own thread, then the long ones by all threads together. The barrier after
      // an epoch makes its output readable by the next (and lets the next group, or window,
      // overwrite the shared arrays after the last). Fields are read in the epoch, not kept in
      // registers through the others.
      for (unsigned int first = 0; first < count;) {
        const unsigned int epoch_end = next_end;
        next_end = lz4k_first_above(b, dependency, epoch_end, count, t);
        const unsigned int epoch = (epoch_end == LZ4K_GROUP ? ~0u : (1u << epoch_end) - 1u) & ~((1u << first) - 1u);
        if ((long_ones & epoch) == 0u) {
          lz4k_copy_epoch_lanes(b, first, epoch_end, in, out, t);
        } else {
          if (t >= first && t < epoch_end && !(long_ones >> t & 1u)) {
            const unsigned int to = b.group.out[t], n_literals = b.group.literals[t], n_match = b.group.match[t];
            const unsigned char* literal_source = lz4k_literal_source(b, in, lo, n, b.group.from[t], n_literals);
            for (unsigned int k = 0; k < n_literals; k += LZ4K_CHUNK)
              lz4k_copy_chunk(out + to + k, literal_source + k, n_literals - k);
            if (n_match != 0u) lz4k_copy_match_alone(out + to + n_literals, b.group.offset[t], n_match);
          }
          for (unsigned int ones = long_ones & epoch; ones != 0u; ones &= ones - 1u)
            lz4k_copy_long(b, (unsigned int)__ffs((int)ones) - 1u, in, lo, n, out, t);
        }
        lz4k_sync();
        first = epoch_end;
      }
      if (b.done) {               // the window's last group
        op = b.group.out[count];  // the last sequence's match was counted
        break;
      }
    }
    if (problem != ~0u || b.done) break;
    lo = b.next;
  }
  if (t == 0) {
    sizes[block] = problem == ~0u ? op : 0u;
    status[block] = problem == ~0u ? LZ4K_OK : problem & 7u;
  }
}
