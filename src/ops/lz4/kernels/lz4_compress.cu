// LZ4 block compression, one thread block per LZ4 block: the threads clear the hash table in
// shared memory, thread 0 runs LZ4's fast greedy parse (LZ4_compress_fast at acceleration 1:
// 4-byte matches found through a hash of the next bytes, a search step that grows after 64
// misses, backward extension, the end rules MFLIMIT = 12 and LASTLITERALS = 5), and a block that
// does not shrink is copied raw by all threads, as the frame format allows.
//
// The hash table mirrors liblz4's choice so that the ratio matches `lz4 -1`: blocks under
// 64 KiB + 11 bytes use 8192 16-bit positions and a hash of 4 bytes; larger ones 4096 32-bit
// positions, a hash of 5 bytes and the 65535-byte window check. Both are 16 KiB. (Smaller
// 16-bit tables: LZ4K_SMALL_HASH_LOG below.)
//
// Launch: block = LZ4K_COMPRESS_THREADS threads, grid = the block count. Block i compresses
// in_base[in_offsets[i], + in_lengths[i]) (at most 4 MiB) into out[i * slot_bytes, ...)
// (slot_bytes >= the LZ4 compress bound of the largest block) and writes its stored size to
// sizes[i], with bit 31 set when the block is stored raw.
#include "lz4_copy.cuh"

#define LZ4K_COMPRESS_THREADS 64
#define LZ4K_MINMATCH 4u
#define LZ4K_LASTLITERALS 5u
#define LZ4K_MFLIMIT 12u
#define LZ4K_SKIP_TRIGGER 6u
#define LZ4K_DISTANCE_MAX 65535u
#define LZ4K_64K_LIMIT (65536u + LZ4K_MFLIMIT - 1u)
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

__device__ __forceinline__ unsigned int lz4k_read32(const unsigned char* p) {
  return (unsigned int)p[0] | ((unsigned int)p[1] << 8) | ((unsigned int)p[2] << 16) | ((unsigned int)p[3] << 24);
}

__device__ __forceinline__ unsigned long long lz4k_read64(const unsigned char* p) {
  return (unsigned long long)lz4k_read32(p) | ((unsigned long long)lz4k_read32(p + 4) << 32);
}

struct Lz4HashTable {
  unsigned int* words;
  int small;  // 16-bit positions, 4-byte hash

  __device__ unsigned int hash(const unsigned char* p) const {
    if (small) return (lz4k_read32(p) * 2654435761u) >> (32 - LZ4K_SMALL_HASH_LOG);
    return (unsigned int)(((lz4k_read64(p) << 24) * 889523592379ull) >> (64 - 12));
  }
  __device__ unsigned int get(unsigned int h) const {
    return small ? (unsigned int)((unsigned short*)words)[h] : words[h];
  }
  __device__ void put(unsigned int h, unsigned int position) const {
    if (small)
      ((unsigned short*)words)[h] = (unsigned short)position;
    else
      words[h] = position;
  }
  __device__ int in_window(unsigned int match, unsigned int position) const {
    return small || match + LZ4K_DISTANCE_MAX >= position;
  }
};

__device__ __forceinline__ unsigned int lz4k_put_length(unsigned char* dst, unsigned int op, unsigned int length) {
  for (; length >= 255u; length -= 255u) dst[op++] = 255u;
  dst[op++] = (unsigned char)length;
  return op;
}

// Literals in[anchor, anchor + count) with their token at dst[op]; returns the next output byte.
__device__ unsigned int lz4k_put_literals(const unsigned char* src, unsigned int anchor, unsigned int count,
                                          unsigned char* dst, unsigned int op) {
  const unsigned int token = op++;
  if (count >= 15u) {
    dst[token] = 15u << 4;
    op = lz4k_put_length(dst, op, count - 15u);
  } else {
    dst[token] = (unsigned char)(count << 4);
  }
  lz4k_copy(dst + op, src + anchor, count, 0, 1);  // this thread alone, loads before stores
  return op + count;
}

// How many bytes from src[a] equal those from src[b] (b < a), stopping before src[limit]: four
// at a time (the lowest differing byte of the XOR, as liblz4 counts), then byte by byte. (A form
// comparing sixteen bytes a step, with the search loop fetching its next candidate one step ahead,
// ran at 0.52-0.59x nvCOMP on an H100 where this one had run at 0.60-0.63x on the H200: not an A/B
// on one GPU, so this measured form stays. bench/results/2026-12-06-h100-lz4.md.)
__device__ __forceinline__ unsigned int lz4k_match_length(const unsigned char* src, unsigned int a, unsigned int b,
                                                          unsigned int limit) {
  const unsigned int avail = a < limit ? limit - a : 0u;
  unsigned int length = 0;
  while (length + 4u <= avail) {
    const unsigned int diff = lz4k_read32(src + a + length) ^ lz4k_read32(src + b + length);
    if (diff != 0u) return length + ((unsigned int)(__ffs((int)diff) - 1) >> 3);
    length += 4u;
  }
  while (length < avail && src[a + length] == src[b + length]) ++length;
  return length;
}

// Compresses src[0, n) into dst; returns the compressed size (at most the compress bound).
__device__ unsigned int lz4k_compress_block(const unsigned char* src, unsigned int n, unsigned char* dst,
                                            Lz4HashTable table) {
  unsigned int anchor = 0, ip = 0, op = 0;
  if (n >= LZ4K_MFLIMIT + 1u) {
    const unsigned int mflimit_plus_one = n - LZ4K_MFLIMIT + 1u;
    const unsigned int match_limit = n - LZ4K_LASTLITERALS;
    table.put(table.hash(src), 0);
    ip = 1;
    unsigned int forward_hash = table.hash(src + 1);
    for (;;) {
      // Find a 4-byte match, stepping faster the longer none turns up.
      unsigned int match;
      unsigned int forward_ip = ip, step = 1, search = 1u << LZ4K_SKIP_TRIGGER;
      for (;;) {
        const unsigned int h = forward_hash;
        ip = forward_ip;
        forward_ip += step;
        step = search++ >> LZ4K_SKIP_TRIGGER;
        if (forward_ip > mflimit_plus_one) goto last_literals;
        match = table.get(h);
        forward_hash = table.hash(src + forward_ip);
        table.put(h, ip);
        if (!table.in_window(match, ip)) continue;
        if (lz4k_read32(src + match) == lz4k_read32(src + ip)) break;
      }
      while (ip > anchor && match > 0 && src[ip - 1] == src[match - 1]) {
        --ip;
        --match;
      }
      unsigned int token = op;
      op = lz4k_put_literals(src, anchor, ip - anchor, dst, op);
      for (;;) {  // a match at ip, and maybe an immediate next one
        const unsigned int offset = ip - match;
        dst[op++] = (unsigned char)offset;
        dst[op++] = (unsigned char)(offset >> 8);
        const unsigned int length = lz4k_match_length(src, ip + LZ4K_MINMATCH, match + LZ4K_MINMATCH, match_limit);
        ip += LZ4K_MINMATCH + length;
        if (length >= 15u) {
          dst[token] += 15u;
          op = lz4k_put_length(dst, op, length - 15u);
        } else {
          dst[token] += (unsigned char)length;
        }
        anchor = ip;
        if (ip >= mflimit_plus_one) goto last_literals;
        table.put(table.hash(src + ip - 2), ip - 2);
        const unsigned int h = table.hash(src + ip);
        match = table.get(h);
        table.put(h, ip);
        if (!(table.in_window(match, ip) && lz4k_read32(src + match) == lz4k_read32(src + ip))) break;
        token = op++;
        dst[token] = 0;
      }
      forward_hash = table.hash(src + ++ip);
    }
  }
last_literals:
  return lz4k_put_literals(src, anchor, n - anchor, dst, op);
}

extern "C" __global__ void lz4_compress(const unsigned char* in_base, const unsigned long long* in_offsets,
                                        const unsigned int* in_lengths, unsigned char* out,
                                        unsigned long long slot_bytes, unsigned int* sizes) {
  __shared__ unsigned int table_words[LZ4K_TABLE_WORDS];
  __shared__ unsigned int compressed;
  const unsigned int n = in_lengths[blockIdx.x];
  const unsigned char* src = in_base + in_offsets[blockIdx.x];
  unsigned char* dst = out + (unsigned long long)blockIdx.x * slot_bytes;

  for (unsigned int j = threadIdx.x; j < LZ4K_TABLE_WORDS; j += blockDim.x) table_words[j] = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    Lz4HashTable table;
    table.words = table_words;
    table.small = n < LZ4K_64K_LIMIT;
#ifdef LZ4K_SMALL_BLOCKS_ONLY
    compressed = table.small ? lz4k_compress_block(src, n, dst, table) : n;  // a larger block: raw, never wrong
#else
    compressed = lz4k_compress_block(src, n, dst, table);
#endif
  }
  __syncthreads();
  if (compressed < n) {
    if (threadIdx.x == 0) sizes[blockIdx.x] = compressed;
    return;
  }
  lz4k_copy(dst, src, n, threadIdx.x, blockDim.x);
  if (threadIdx.x == 0) sizes[blockIdx.x] = n | 0x80000000u;
}
