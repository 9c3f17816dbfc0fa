// LZ4 block compression, one 32-thread block per LZ4 block, all threads parsing together: LZ4's
// fast greedy parse (4-byte matches found through a hash of the next bytes, a search that steps
// faster after 64 misses, backward extension, the end rules MFLIMIT = 12 and LASTLITERALS = 5),
// with the search done 32 positions at a time. A block that does not shrink is stored raw.
//
// Why this shape: the serial parse (one thread of a block, liblz4's loop) left ~14 active threads
// per SM, each waiting on a chain of dependent loads per position, at about half nvCOMP's speed.
// Here a search round has thread t hash position ip + t * stride, read its candidate from the
// table and compare 4 bytes; the first position with a match wins (a minimum across the block),
// and the table takes the round's positions up to the winner, the latest of equal hashes winning
// (atomic max), as liblz4's one-at-a-time updates leave it. Forward extension compares 128 bytes
// a step (4 per thread), literals are copied by all threads, and liblz4's insertion of ip - 2
// after each match is kept. The parse is therefore not byte-identical to LZ4_compress_fast: a
// round looks up every position against the table as it stood before the round, so a repeat
// within the same 32 positions is found a round later (the ratio stays within ~1% of `lz4 -1`;
// docs/lz4.md). The stride schedule follows liblz4's: 1 for the first 64 positions after a
// match, then one more every 64 positions. The threads exchange results through shared memory
// and __syncthreads (no warp intrinsics: the same source runs on the CPU backend), so each state
// value is computed by every thread alike and control flow stays uniform.
//
// The hash table mirrors liblz4's choice: blocks under 64 KiB + 11 bytes use 16-bit positions and
// a hash of 4 bytes (2^LZ4K_SMALL_HASH_LOG entries), larger ones 4096 32-bit positions, a hash of
// 5 bytes and the 65535-byte window check.
//
// Launch: block = 1..LZ4K_COMPRESS_THREADS threads (32 on a GPU; the CPU backend runs a block's
// threads one after another, so there one thread, a round of one position: the serial parse, with
// no barriers), grid = the block count. Block i compresses in_base[in_offsets[i], + in_lengths[i])
// (at most 4 MiB) into out[i * slot_bytes, ...) (slot_bytes >= the LZ4 compress bound of the
// largest block) and writes its stored size to sizes[i], with bit 31 set when the block is stored
// raw. Deterministic: the same input gives the same output.
#include "lz4_copy.cuh"

#define LZ4K_COMPRESS_THREADS 32u
#define LZ4K_MINMATCH 4u
#define LZ4K_LASTLITERALS 5u
#define LZ4K_MFLIMIT 12u
#define LZ4K_SKIP_TRIGGER 6u
#define LZ4K_DISTANCE_MAX 65535u
#define LZ4K_64K_LIMIT (65536u + LZ4K_MFLIMIT - 1u)
#define LZ4K_NONE 0xFFFFFFFFu
// LZ4K_SMALL_HASH_LOG: log2 of the 16-bit table's entries (liblz4: 13). LZ4K_SMALL_BLOCKS_ONLY:
// every block is under 64 KiB + 11 bytes (the host knows), so only the 16-bit table is needed
// and the shared memory per block shrinks with it (12: 8 KiB, twice the blocks per SM).
#ifndef LZ4K_SMALL_HASH_LOG
#define LZ4K_SMALL_HASH_LOG 13
#endif
#if LZ4K_SMALL_HASH_LOG > 13 || LZ4K_SMALL_HASH_LOG < 10
#error "LZ4K_SMALL_HASH_LOG must be 10..13"
#endif
#ifdef LZ4K_SMALL_BLOCKS_ONLY
#define LZ4K_TABLE_WORDS ((1u << LZ4K_SMALL_HASH_LOG) / 2u)
#else
#define LZ4K_TABLE_WORDS 4096u
#endif

// Four bytes from p as two aligned words and a funnel shift (half the loads of four byte loads).
// Reads up to 7 bytes from p's aligned word: every caller has 8 bytes from p inside the block
// (positions stop 12 bytes before its end), and an aligned word holding a byte of the block lies
// in the block's allocation.
__device__ __forceinline__ unsigned int lz4k_read32(const unsigned char* p) {
  const unsigned long long address = (unsigned long long)p;
  const unsigned int* word = (const unsigned int*)(address & ~3ull);
  return __funnelshift_r(word[0], word[1], (unsigned int)(address & 3u) * 8u);
}

__device__ __forceinline__ unsigned long long lz4k_read64(const unsigned char* p) {
  return (unsigned long long)lz4k_read32(p) | ((unsigned long long)lz4k_read32(p + 4) << 32);
}

struct Lz4HashTable {
  unsigned int* words;
  int small;  // 16-bit positions (two a word, entry h in half h & 1 of word h / 2), 4-byte hash

  __device__ unsigned int hash(const unsigned char* p) const {
    if (small) return (lz4k_read32(p) * 2654435761u) >> (32 - LZ4K_SMALL_HASH_LOG);
    return (unsigned int)(((lz4k_read64(p) << 24) * 889523592379ull) >> (64 - 12));
  }
  __device__ unsigned int get(unsigned int h) const {
    return small ? (words[h >> 1] >> ((h & 1u) * 16u)) & 0xFFFFu : words[h];
  }
  // Entry h becomes position unless it holds a later one: threads of a round that share an entry
  // leave the latest position there, whatever order they run in.
  __device__ void put_latest(unsigned int h, unsigned int position) const {
    if (!small) {
      atomicMax(words + h, position);
      return;
    }
    unsigned int* word = words + (h >> 1);
    const unsigned int shift = (h & 1u) * 16u;
    unsigned int old = *word;
    while (((old >> shift) & 0xFFFFu) < position) {
      const unsigned int seen = atomicCAS(word, old, (old & ~(0xFFFFu << shift)) | (position << shift));
      if (seen == old) break;
      old = seen;
    }
  }
  __device__ int in_window(unsigned int match, unsigned int position) const {
    return small || match + LZ4K_DISTANCE_MAX >= position;
  }
};

// What the threads of a block exchange: the minimum of a value across them (three slots in turn,
// so that one barrier per exchange is enough: slot c + 1 is reset during exchange c, after every
// thread has read it in exchange c - 2), and the candidates of a search round.
struct Lz4Exchange {
  unsigned int min_slot[3];
  unsigned int candidate[LZ4K_COMPRESS_THREADS];
};

// The minimum of `value` over the block's threads (every thread calls it; one barrier).
__device__ __forceinline__ unsigned int lz4k_block_min(Lz4Exchange* x, unsigned int& exchange, unsigned int value) {
  const unsigned int slot = exchange % 3u, next = (exchange + 1u) % 3u;
  if (threadIdx.x == 0) x->min_slot[next] = LZ4K_NONE;
  if (blockDim.x == 1) return value;  // alone: nothing to exchange, no barrier
  if (value != LZ4K_NONE) atomicMin(x->min_slot + slot, value);
  __syncthreads();
  ++exchange;
  return x->min_slot[slot];
}

// dst[op...] = length as LZ4's 255-continued bytes, written by all threads; returns the next byte.
__device__ __forceinline__ unsigned int lz4k_put_length(unsigned char* dst, unsigned int op, unsigned int length) {
  const unsigned int full = length / 255u;
  for (unsigned int j = threadIdx.x; j < full; j += blockDim.x) dst[op + j] = 255u;
  if (threadIdx.x == 0) dst[op + full] = (unsigned char)(length - full * 255u);
  return op + full + 1u;
}

// The size of a sequence's token, literal length and literals.
__device__ __forceinline__ unsigned int lz4k_literals_bytes(unsigned int count) {
  return 1u + (count >= 15u ? (count - 15u) / 255u + 1u : 0u) + count;
}

// Token (match part `match_nibble`), literal length and literals src[anchor, + count) at dst[op];
// returns the next output byte.
__device__ unsigned int lz4k_put_literals(const unsigned char* src, unsigned int anchor, unsigned int count,
                                          unsigned int match_nibble, unsigned char* dst, unsigned int op) {
  const unsigned int token = op++;
  if (count >= 15u) {
    if (threadIdx.x == 0) dst[token] = (unsigned char)((15u << 4) | match_nibble);
    op = lz4k_put_length(dst, op, count - 15u);
  } else if (threadIdx.x == 0) {
    dst[token] = (unsigned char)((count << 4) | match_nibble);
  }
  // Literal runs are mostly short: four loads in flight per thread (sixteen would hold registers
  // that the parse needs).
  lz4k_copy<4>(dst + op, src + anchor, count, threadIdx.x, blockDim.x);
  return op + count;
}

// How many bytes from src[a] equal those from src[b] (b < a), stopping before src[limit]: 4 bytes
// a thread a step (the lowest differing byte of a thread's XOR, as liblz4 counts).
__device__ unsigned int lz4k_match_length(const unsigned char* src, unsigned int a, unsigned int b, unsigned int limit,
                                          Lz4Exchange* x, unsigned int& exchange) {
  const unsigned int avail = a < limit ? limit - a : 0u;
  for (unsigned int base = 0;; base += 4u * blockDim.x) {
    const unsigned int at = base + 4u * threadIdx.x;
    unsigned int length = avail;  // this thread's first differing byte, avail, or none in its 4 bytes
    if (at + 4u <= avail) {
      const unsigned int diff = lz4k_read32(src + a + at) ^ lz4k_read32(src + b + at);
      length = diff != 0u ? at + ((unsigned int)(__ffs((int)diff) - 1) >> 3) : LZ4K_NONE;
    } else if (at < avail) {
      length = at;
      while (length < avail && src[a + length] == src[b + length]) ++length;
    }
    const unsigned int found = lz4k_block_min(x, exchange, length);
    if (found != LZ4K_NONE) return found;
  }
}

// Compresses src[0, n) into dst with all threads of the block; returns the compressed size, or n
// when that would be n or more (then nothing past the sequences is written: the caller stores the
// block raw).
__device__ unsigned int lz4k_compress_block(const unsigned char* src, unsigned int n, unsigned char* dst,
                                            Lz4HashTable table, Lz4Exchange* x) {
  unsigned int anchor = 0, op = 0, exchange = 0;
  if (n >= LZ4K_MFLIMIT + 1u) {
    const unsigned int mflimit_plus_one = n - LZ4K_MFLIMIT + 1u;  // a match starts before it
    const unsigned int match_limit = n - LZ4K_LASTLITERALS;
    unsigned int ip = 0, searched = 0;  // positions looked up since the last match
    for (;;) {
      // One round: position ip + t * stride for thread t.
      const unsigned int stride = (searched >> LZ4K_SKIP_TRIGGER) + 1u;
      const unsigned int position = ip + threadIdx.x * stride;
      const bool live = position < mflimit_plus_one;
      unsigned int h = 0, candidate = 0, mine = LZ4K_NONE;
      if (live) {
        h = table.hash(src + position);
        candidate = table.get(h);
        if (candidate < position && table.in_window(candidate, position) &&
            lz4k_read32(src + candidate) == lz4k_read32(src + position))
          mine = threadIdx.x;
      }
      x->candidate[threadIdx.x] = candidate;
      const unsigned int winner = lz4k_block_min(x, exchange, mine);
      if (live && threadIdx.x <= winner) table.put_latest(h, position);
      if (winner == LZ4K_NONE) {
        searched += blockDim.x;
        ip += blockDim.x * stride;
        if (ip >= mflimit_plus_one) break;
        if (blockDim.x > 1) __syncthreads();  // the table's updates before the next round's lookups
        continue;
      }

      unsigned int start = ip + winner * stride, match = x->candidate[winner];
      while (start > anchor && match > 0 && src[start - 1] == src[match - 1]) {
        --start;
        --match;
      }
      const unsigned int length =
          lz4k_match_length(src, start + LZ4K_MINMATCH, match + LZ4K_MINMATCH, match_limit, x, exchange);
      op = lz4k_put_literals(src, anchor, start - anchor, length >= 15u ? 15u : length, dst, op);
      const unsigned int offset = start - match;
      if (threadIdx.x == 0) {
        dst[op] = (unsigned char)offset;
        dst[op + 1] = (unsigned char)(offset >> 8);
      }
      op += 2;
      if (length >= 15u) op = lz4k_put_length(dst, op, length - 15u);
      ip = anchor = start + LZ4K_MINMATCH + length;
      searched = 0;
      if (ip >= mflimit_plus_one) break;
      // As liblz4: the position two before the match's end goes in (after the round's updates:
      // lz4k_match_length's barrier); the next round looks up ip itself first.
      if (threadIdx.x == 0) table.put_latest(table.hash(src + ip - 2), ip - 2);
      if (blockDim.x > 1) __syncthreads();
    }
  }
  const unsigned int count = n - anchor;
  if (op + lz4k_literals_bytes(count) >= n) return n;
  return lz4k_put_literals(src, anchor, count, 0, dst, op);
}

extern "C" __global__ void lz4_compress(const unsigned char* in_base, const unsigned long long* in_offsets,
                                        const unsigned int* in_lengths, unsigned char* out,
                                        unsigned long long slot_bytes, unsigned int* sizes) {
  __shared__ unsigned int table_words[LZ4K_TABLE_WORDS];
  __shared__ Lz4Exchange exchange;
  const unsigned int n = in_lengths[blockIdx.x];
  const unsigned char* src = in_base + in_offsets[blockIdx.x];
  unsigned char* dst = out + (unsigned long long)blockIdx.x * slot_bytes;

  for (unsigned int j = threadIdx.x; j < LZ4K_TABLE_WORDS; j += blockDim.x) table_words[j] = 0;
  if (threadIdx.x < 3) exchange.min_slot[threadIdx.x] = LZ4K_NONE;
  __syncthreads();
  Lz4HashTable table;
  table.words = table_words;
  table.small = n < LZ4K_64K_LIMIT;
#ifdef LZ4K_SMALL_BLOCKS_ONLY
  const unsigned int compressed = table.small ? lz4k_compress_block(src, n, dst, table, &exchange) : n;
#else
  const unsigned int compressed = lz4k_compress_block(src, n, dst, table, &exchange);
#endif
  if (compressed < n) {
    if (threadIdx.x == 0) sizes[blockIdx.x] = compressed;
    return;
  }
  // The parse may have written sequences to dst before it found the block does not shrink: other
  // threads' bytes there must land before the raw copy overwrites them.
  __syncthreads();
  lz4k_copy(dst, src, n, threadIdx.x, blockDim.x);
  if (threadIdx.x == 0) sizes[blockIdx.x] = n | 0x80000000u;
}
