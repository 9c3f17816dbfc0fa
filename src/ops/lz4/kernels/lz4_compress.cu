// LZ4 block compression, one 32-thread block per LZ4 block, all threads parsing together: LZ4's
// fast greedy parse (4-byte matches found through a hash of the next bytes, a search that steps
// faster after 64 misses, backward extension, the end rules MFLIMIT = 12 and LASTLITERALS = 5),
// with the search done 32 positions at a time. A block that does not shrink is stored raw.
//
// Why this shape: the serial parse (one thread of a block, liblz4's loop) left ~14 active threads
// per SM, each waiting on a chain of dependent loads per position, at about half nvCOMP's speed.
// Here a search round has thread t hash position ip + t * stride and take as its candidate what
// a serial parse would find in that entry: the round's latest earlier position with the same hash
// (its lookup found no match, so a serial parse would have put it there first), else the table's
// entry; then compare 4 bytes. The first position with a match wins (the lowest such thread), and
// the table takes the round's positions up to the winner, the latest of equal hashes winning, as
// liblz4's one-at-a-time updates leave it. Forward extension compares 128 bytes a step (4 per
// thread), literals are copied by all threads (runs over 32 bytes, and raw blocks, 16 bytes a
// thread), and liblz4's insertion of ip - 2 after each match is kept: LZ4_compress_fast's greedy
// parse, with the table and hash the caller picks (DeviceLz4's smaller table for large calls costs
// ratio; docs/lz4.md). Before the round's earlier positions were candidates, a repeat within 32
// positions was found a round later: +0.2-0.3% ratio on the CPU backend's 32-thread parse of
// binaries and Python sources at 2624 entries. The stride schedule follows liblz4's: 1 for
// the first 64 positions after a match, then one more every 64 positions.
//
// The threads exchange results through Lz4Lanes, called by every thread at the same points, so
// each state value is computed by every thread alike and control flow stays uniform. It has two
// forms. On a GPU (LZ4K_WARP_EXCHANGE) the block is one warp and exchanges through warp
// intrinsics: a ballot for the winner (its lane found only when there is one), a shuffle for its
// candidate, a min reduction for a match's length, and __match_any_sync so that of the lanes
// with equal hashes only the highest stores, a plain 16-bit store; __syncwarp orders the table
// between rounds. No shared memory but the table, no block barrier in the parse, no atomics. The
// CPU backend refuses warp intrinsics (its threads run one after another, switching only at
// __syncthreads), so there the exchange goes through shared memory and barriers (an atomic min,
// and an atomic max of positions into the table). Both forms give every thread the same values,
// so at the same threads per block they make the same parse, byte for byte: a GPU's blocks are
// the CPU backend's at 32 threads (tests/unit/test_lz4_kernels.cpp runs the warp form on the CPU
// backend with the intrinsics emulated and compares the two; tests/gpu/test_lz4_gpu.cpp compares
// a GPU's blocks with the CPU backend's).
//
// The hash table mirrors liblz4's choice: blocks under 64 KiB + 11 bytes use 16-bit positions and
// a hash of 4 bytes (LZ4K_SMALL_TABLE_ENTRIES entries), larger ones 4096 32-bit positions, a hash of
// 5 bytes and the 65535-byte window check.
//
// Launch: block = 1..LZ4K_COMPRESS_THREADS threads (32 on a GPU, one warp; the CPU backend runs a
// block's threads one after another, so there one thread, a round of one position: the serial
// parse, with no barriers), times LZ4K_BLOCKS_PER_CTA (32 lanes each); grid = count LZ4 blocks
// over LZ4K_BLOCKS_PER_CTA, rounded up. LZ4 block i compresses in_base[in_offsets[i],
// + in_lengths[i]) (at most 4 MiB) into out[i * slot_bytes, ...) (slot_bytes >= the LZ4 compress
// bound of the largest block) and writes its stored size to sizes[i], with bit 31 set when the
// block is stored raw. Deterministic: the same input gives the same output.
#define LZ4K_COMPRESS_THREADS 32u
#define LZ4K_MINMATCH 4u
#define LZ4K_LASTLITERALS 5u
#define LZ4K_MFLIMIT 12u
#define LZ4K_SKIP_TRIGGER 6u
#define LZ4K_DISTANCE_MAX 65535u
#define LZ4K_64K_LIMIT (65536u + LZ4K_MFLIMIT - 1u)
#define LZ4K_NONE 0xFFFFFFFFu
// LZ4K_SMALL_TABLE_ENTRIES: the 16-bit table's entries (liblz4: 8192; any multiple of 8 from
// 1024, the hash scaled to it by a multiply-high, which for a power of two is liblz4's shift).
// LZ4K_SMALL_BLOCKS_ONLY: every block is under 64 KiB + 11 bytes (the host knows), so only the
// 16-bit table is needed and the shared memory per block shrinks with it (2624 entries: 5,248 bytes,
// 32 blocks an SM in the 196 KiB carve-out, so that a 256 MiB input's 4096 blocks are all resident at once).
// LZ4K_SMALL_HASH_BYTES: the bytes of a position the 16-bit table hashes, 4 (liblz4's) or 5 (the
// key is then 8 bytes read, as for the 32-bit table; a match still needs 4 equal bytes).
#ifndef LZ4K_SMALL_HASH_BYTES
#define LZ4K_SMALL_HASH_BYTES 4
#endif
#if LZ4K_SMALL_HASH_BYTES != 4 && LZ4K_SMALL_HASH_BYTES != 5
#error "LZ4K_SMALL_HASH_BYTES must be 4 or 5"
#endif
#ifndef LZ4K_SMALL_TABLE_ENTRIES
#define LZ4K_SMALL_TABLE_ENTRIES 8192u
#endif
#if LZ4K_SMALL_TABLE_ENTRIES > 8192 || LZ4K_SMALL_TABLE_ENTRIES < 1024 || LZ4K_SMALL_TABLE_ENTRIES % 8 != 0
#error "LZ4K_SMALL_TABLE_ENTRIES must be a multiple of 8 from 1024 to 8192"
#endif
#include "lz4_copy.cuh"  // lz4k_store16

// LZ4K_WARP_EXCHANGE: the threads exchange through warp intrinsics, as on a GPU. On the CPU
// backend a test runs that form too (LZ4K_WARP_EMULATION: its header emulates the intrinsics
// with shared memory and barriers), to check that both forms make the same parse.
#ifdef LZ4K_WARP_EMULATION
#include "lz4_warp_emulation.h"
#define LZ4K_WARP_EXCHANGE
#elif defined(__CUDA_ARCH__)
#define LZ4K_WARP_EXCHANGE
#endif
// LZ4K_BLOCKS_PER_CTA (warp form only): LZ4 blocks a thread block compresses, one warp of 32
// lanes each, each with its own table: fewer thread blocks share the 1 KiB of shared memory the
// GPU reserves for each, so that a table size can stay under a smaller shared-memory carve-out
// (more of the SM's store left as L1 cache; DeviceLz4 hints the carve-out for 32 warps an SM).
// Measured in docs/lz4.md. The lane and the lanes a block are then the warp's.
#ifndef LZ4K_BLOCKS_PER_CTA
#define LZ4K_BLOCKS_PER_CTA 1
#endif
#if LZ4K_BLOCKS_PER_CTA == 1
#define LZ4K_LANE threadIdx.x
#define LZ4K_LANES blockDim.x
#elif defined(LZ4K_WARP_EXCHANGE)
#define LZ4K_LANE (threadIdx.x & 31u)
#define LZ4K_LANES 32u
#else
#error "LZ4K_BLOCKS_PER_CTA > 1 needs the warp form"
#endif
#ifdef LZ4K_SMALL_BLOCKS_ONLY
#define LZ4K_TABLE_WORDS (LZ4K_SMALL_TABLE_ENTRIES / 2u)
#else
#define LZ4K_TABLE_WORDS 4096u
#endif

// The block's bytes, and its words: four bytes at i are two aligned words and a funnel shift (half
// the loads of four byte loads), found from the block's first aligned word (a 32-bit index and one
// 64-bit add per read, not a pointer rounded down each time). Reads up to 7 bytes from i's aligned
// word: every caller has 8 bytes from i inside the block (positions stop 12 bytes before its end),
// and an aligned word holding a byte of the block lies in the block's allocation. The funnel shift
// takes its shift modulo 32, so q * 8 needs no mask.
struct Lz4Source {
  const unsigned char* bytes;
  const unsigned int* words;  // the aligned word holding bytes[0]
  unsigned int misalign;      // bytes[0]'s place in it

  __device__ void init(const unsigned char* block) {
    bytes = block;
    misalign = (unsigned int)(unsigned long long)block & 3u;
    words = (const unsigned int*)(block - misalign);  // from the pointer: the compiler still knows it is global
  }
  __device__ unsigned int read32(unsigned int i) const {
    const unsigned int q = i + misalign;
    const unsigned int* word = words + (q >> 2);
    return __funnelshift_r(word[0], word[1], q * 8u);
  }
  __device__ unsigned long long read64(unsigned int i) const {
    return (unsigned long long)read32(i) | ((unsigned long long)read32(i + 4u) << 32);
  }
};

// dst[0, count) = the block's bytes [from, from + count), by all threads: the bytes before dst's
// first 16-byte boundary and those after its last one a thread each, between them 16 bytes a
// thread at a time, each five aligned words of the source funnel-shifted into four and stored at
// once, `Unroll` of those in flight per thread (sm_90: ~2 instructions a byte a thread at Unroll 4,
// where lz4k_copy's byte copy took ~24). The fifth word is read only when the source is not
// aligned with dst: it then holds a byte of the 16, so it lies in the block's allocation.
template <unsigned int Unroll>
__device__ void lz4k_copy_out(unsigned char* dst, const Lz4Source& src, unsigned int from, unsigned int count) {
  const unsigned int to_boundary = (0u - (unsigned int)(unsigned long long)dst) & 15u;
  const unsigned int head = count < to_boundary ? count : to_boundary;
  for (unsigned int j = LZ4K_LANE; j < head; j += LZ4K_LANES) dst[j] = src.bytes[from + j];
  const unsigned int chunks = (count - head) / 16u;
  const unsigned int q = from + head + src.misalign;  // chunk 0's first byte, from src.words
  const unsigned int shift = q * 8u;                  // modulo 32: q's place in its word
  const bool straddles = (q & 3u) != 0u;
  const unsigned int* words = src.words + (q >> 2);
  unsigned char* aligned = dst + head;
  for (unsigned int c0 = LZ4K_LANE; c0 < chunks; c0 += Unroll * LZ4K_LANES) {
    unsigned int w[Unroll][5];
#pragma unroll
    for (unsigned int u = 0; u < Unroll; ++u) {
      const unsigned int c = c0 + u * LZ4K_LANES;
      if (c < chunks) {
        const unsigned int* at = words + 4u * c;
        w[u][0] = at[0];
        w[u][1] = at[1];
        w[u][2] = at[2];
        w[u][3] = at[3];
        w[u][4] = straddles ? at[4] : 0u;
      }
    }
#pragma unroll
    for (unsigned int u = 0; u < Unroll; ++u) {
      const unsigned int c = c0 + u * LZ4K_LANES;
      if (c < chunks)
        lz4k_store16(aligned + 16u * c, __funnelshift_r(w[u][0], w[u][1], shift),
                     __funnelshift_r(w[u][1], w[u][2], shift), __funnelshift_r(w[u][2], w[u][3], shift),
                     __funnelshift_r(w[u][3], w[u][4], shift));
    }
  }
  for (unsigned int j = head + 16u * chunks + LZ4K_LANE; j < count; j += LZ4K_LANES) dst[j] = src.bytes[from + j];
}

// The table's storage: 32-bit words, or 16-bit entries (entry h in half h & 1 of word h / 2: the
// same bytes, little-endian) for the warp exchange's plain 16-bit stores.
union alignas(16) Lz4TableStorage {
  unsigned int words[LZ4K_TABLE_WORDS];
  unsigned short halves[2u * LZ4K_TABLE_WORDS];
};

struct Lz4HashTable {
  Lz4TableStorage* storage;
  int small;  // 16-bit positions, a LZ4K_SMALL_HASH_BYTES hash

  // The bytes from i that the hash reads: 4 (the small table hashing 4 bytes) or 8 (of which a
  // 5-byte hash uses 5); the low 32 bits are read32(i) either way.
  __device__ unsigned long long key(const Lz4Source& src, unsigned int i) const {
#if LZ4K_SMALL_HASH_BYTES == 4
    return small ? (unsigned long long)src.read32(i) : src.read64(i);
#else
    return src.read64(i);
#endif
  }
  __device__ unsigned int hash_key(unsigned long long key) const {
#if LZ4K_SMALL_HASH_BYTES == 4
    if (small) return __umulhi((unsigned int)key * 2654435761u, LZ4K_SMALL_TABLE_ENTRIES);
#endif
    // liblz4's 5-byte hash: the 32-bit table takes its top 12 bits, the small one its top 32 scaled.
    const unsigned long long product = (key << 24) * 889523592379ull;
    if (small) return __umulhi((unsigned int)(product >> 32), LZ4K_SMALL_TABLE_ENTRIES);
    return (unsigned int)(product >> (64 - 12));
  }
  __device__ unsigned int hash(const Lz4Source& src, unsigned int i) const {
    return hash_key(key(src, i));
  }
  __device__ int in_window(unsigned int match, unsigned int position) const {
    return small || match + LZ4K_DISTANCE_MAX >= position;
  }
#ifdef LZ4K_WARP_EXCHANGE
  __device__ unsigned int get(unsigned int h) const {
    return small ? storage->halves[h] : storage->words[h];
  }
  // A plain store: the caller makes sure that no other lane stores to entry h at the same time.
  __device__ void put(unsigned int h, unsigned int position) const {
    if (small)
      storage->halves[h] = (unsigned short)position;
    else
      storage->words[h] = position;
  }
#else
  __device__ unsigned int get(unsigned int h) const {
    return small ? (storage->words[h >> 1] >> ((h & 1u) * 16u)) & 0xFFFFu : storage->words[h];
  }
  // Entry h becomes position unless it holds a later one: threads of a round that share an entry
  // leave the latest position there, whatever order they run in.
  __device__ void put_latest(unsigned int h, unsigned int position) const {
    if (!small) {
      atomicMax(storage->words + h, position);
      return;
    }
    unsigned int* word = storage->words + (h >> 1);
    const unsigned int shift = (h & 1u) * 16u;
    unsigned int old = *word;
    while (((old >> shift) & 0xFFFFu) < position) {
      const unsigned int seen = atomicCAS(word, old, (old & ~(0xFFFFu << shift)) | (position << shift));
      if (seen == old) break;
      old = seen;
    }
  }
#endif
};

// How the threads of a block exchange values and order their table accesses. Every thread calls
// each of these at the same point (control flow stays uniform), and both forms below give every
// thread the same results, so the parse is the same on a GPU and on the CPU backend.
#ifdef LZ4K_WARP_EXCHANGE
// On a GPU an LZ4 block (at most 32 threads) is one warp, lane = LZ4K_LANE (several LZ4 blocks a
// thread block are a warp each): warp intrinsics, no shared memory but the table, no block barrier.
struct Lz4Lanes {
  unsigned int mask;       // the block's lanes
  unsigned int below;      // the lanes below this one
  unsigned int found = 0;  // the lanes whose pred held in the last first()
  unsigned int same = 0;   // the live lanes whose hash is this lane's, from the last earlier_same()

  __device__ void init() {
    mask = 0xFFFFFFFFu >> (32u - LZ4K_LANES);
    below = (1u << LZ4K_LANE) - 1u;
  }
  // The position of the highest live lane below this one whose hash is h, or LZ4K_NONE: what a
  // serial parse would find in entry h, the round's earlier positions having gone in before this
  // one's lookup (no hash is NONE, which the lanes past the end give); *its_word gets that lane's
  // first 4 bytes (`word`), so that comparing with it needs no load.
  __device__ unsigned int earlier_same(bool live, unsigned int h, unsigned int position, unsigned int word,
                                       unsigned int* its_word) {
    same = __match_any_sync(mask, live ? h : LZ4K_NONE);
    const unsigned int lower = same & below;
    const unsigned int from = lower != 0u ? 31u - (unsigned int)__clz((int)lower) : 0u;
    *its_word = __shfl_sync(mask, word, from);
    const unsigned int at = __shfl_sync(mask, position, from);
    return lower != 0u ? at : LZ4K_NONE;
  }
  // The lowest lane whose pred holds, or LZ4K_NONE (__ffs of no lanes is 0); value_of(value, lane)
  // then gives its value.
  __device__ unsigned int first(bool pred, unsigned int) {
    found = __ballot_sync(mask, pred);
    return (unsigned int)__ffs((int)found) - 1u;
  }
  // Whether first() found no lane, and whether this lane is at or before the one it found (every
  // lane, when none): from the ballot, not the lane's index (a bit reversal and a find-leading-one
  // on the slower XU pipe, which a round without a match then never computes).
  __device__ bool none(unsigned int) const { return found == 0u; }
  __device__ bool through_first(unsigned int) const { return (found & below) == 0u; }
  __device__ unsigned int value_of(unsigned int value, unsigned int lane) { return __shfl_sync(mask, value, lane); }
  // The minimum of value over the lanes: one reduction from sm_80, a butterfly of shuffles before.
  __device__ unsigned int min(unsigned int value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    for (unsigned int step = 16; step > 0; step >>= 1) {
      const unsigned int other = __shfl_xor_sync(mask, value, step);
      if ((LZ4K_LANE ^ step) < LZ4K_LANES && other < value) value = other;  // not from a lane the block lacks
    }
    return value;
#else
    return __reduce_min_sync(mask, value);
#endif
  }
  // The round's updates: entry h of each updating lane takes the latest (highest-lane) position of
  // the lanes with that h, which one store by that lane does (a 16-bit entry needs no atomics when
  // no other lane writes it; the table's earlier positions are all before the round's). The round's
  // lookups come before the stores: each live lane's lookup fed the ballot that decides who
  // updates, and __syncwarp says so to the memory model (and to compute-sanitizer's racecheck,
  // which sees no order in a data dependence through a ballot).
  // The round's live lanes with this lane's hash come from earlier_same(); the updating lanes are
  // those up to the winner (all when there is none): (lowest bit of found) * 2 - 1 wraps to all.
  __device__ void put_latest(Lz4HashTable table, bool updating, unsigned int h, unsigned int position) {
    const unsigned int through_winner = ((found & (0u - found)) << 1) - 1u;
    __syncwarp(mask);
    if (updating && ((same & through_winner) >> LZ4K_LANE) == 1u) table.put(h, position);
  }
  // Thread 0 puts one position, after the round's updates (which the exchanges since did not
  // order: warp intrinsics exchange values, not memory).
  __device__ void put_one(Lz4HashTable table, unsigned int h, unsigned int position) {
    __syncwarp(mask);
    if (LZ4K_LANE == 0) table.put(h, position);
  }
  // Every lane's stores (the table's, the output's) before what follows: the table's before the
  // next round's lookups, the zeroed table before the parse, sequences before a raw copy.
  __device__ void sync() {
    __syncwarp(mask);
  }
};
#else
// On the CPU backend threads run one after another, switching only at __syncthreads: shared
// memory and block barriers. The minimum goes through three slots in turn, so that one barrier
// per exchange is enough (slot c + 1 is reset during exchange c, after every thread has read it in
// exchange c - 2); a round's candidates go through `candidate`.
struct Lz4Exchange {
  unsigned int min_slot[3];
  unsigned int candidate[LZ4K_COMPRESS_THREADS];
  // earlier_same's: each thread's hash, position and first 4 bytes
  unsigned int hash[LZ4K_COMPRESS_THREADS], position[LZ4K_COMPRESS_THREADS], word[LZ4K_COMPRESS_THREADS];
};

struct Lz4Lanes {
  Lz4Exchange* x;
  unsigned int exchange;  // exchanges so far

  __device__ void init(Lz4Exchange* shared) {
    x = shared;
    exchange = 0;
    if (LZ4K_LANE < 3) x->min_slot[LZ4K_LANE] = LZ4K_NONE;
  }
  // The minimum of `value` over the block's threads (one barrier).
  __device__ unsigned int min(unsigned int value) {
    const unsigned int slot = exchange % 3u, next = (exchange + 1u) % 3u;
    if (LZ4K_LANE == 0) x->min_slot[next] = LZ4K_NONE;
    if (LZ4K_LANES == 1) return value;  // alone: nothing to exchange, no barrier
    if (value != LZ4K_NONE) atomicMin(x->min_slot + slot, value);
    __syncthreads();
    ++exchange;
    return x->min_slot[slot];
  }
  // As the warp form's (one barrier; the arrays are written again only after first()'s barrier,
  // which every thread passes after its reads here).
  __device__ unsigned int earlier_same(bool live, unsigned int h, unsigned int position, unsigned int word,
                                       unsigned int* its_word) {
    if (LZ4K_LANES == 1) return LZ4K_NONE;
    x->hash[LZ4K_LANE] = live ? h : LZ4K_NONE;
    x->position[LZ4K_LANE] = position;
    x->word[LZ4K_LANE] = word;
    __syncthreads();
    unsigned int from = LZ4K_NONE;
    for (unsigned int u = 0; u < LZ4K_LANE; ++u)
      if (live && x->hash[u] == h) from = u;
    if (from == LZ4K_NONE) return LZ4K_NONE;
    *its_word = x->word[from];
    return x->position[from];
  }
  __device__ unsigned int first(bool pred, unsigned int value) {
    x->candidate[LZ4K_LANE] = value;  // read after min's barrier
    return min(pred ? LZ4K_LANE : LZ4K_NONE);
  }
  __device__ unsigned int value_of(unsigned int, unsigned int lane) { return x->candidate[lane]; }
  __device__ bool none(unsigned int first) const { return first == LZ4K_NONE; }
  __device__ bool through_first(unsigned int first) const { return LZ4K_LANE <= first; }
  // After the exchange's barrier, so after every thread's lookup.
  __device__ void put_latest(Lz4HashTable table, bool updating, unsigned int h, unsigned int position) {
    if (updating) table.put_latest(h, position);
  }
  // After the round's updates: an exchange's barrier came between.
  __device__ void put_one(Lz4HashTable table, unsigned int h, unsigned int position) {
    if (LZ4K_LANE == 0) table.put_latest(h, position);
  }
  __device__ void sync() {  // as the warp form's
    if (LZ4K_LANES > 1) __syncthreads();
  }
};
#endif

// dst[op...] = length as LZ4's 255-continued bytes, written by all threads; returns the next byte.
__device__ __forceinline__ unsigned int lz4k_put_length(unsigned char* dst, unsigned int op, unsigned int length) {
  const unsigned int full = length / 255u;
  for (unsigned int j = LZ4K_LANE; j < full; j += LZ4K_LANES) dst[op + j] = 255u;
  if (LZ4K_LANE == 0) dst[op + full] = (unsigned char)(length - full * 255u);
  return op + full + 1u;
}

// The size of a sequence's token, literal length and literals.
__device__ __forceinline__ unsigned int lz4k_literals_bytes(unsigned int count) {
  return 1u + (count >= 15u ? (count - 15u) / 255u + 1u : 0u) + count;
}

// Token (match part `match_nibble`), literal length and literals src[anchor, + count) at dst[op];
// returns the next output byte.
__device__ unsigned int lz4k_put_literals(const Lz4Source& src, unsigned int anchor, unsigned int count,
                                          unsigned int match_nibble, unsigned char* dst, unsigned int op) {
  const unsigned int token = op++;
  if (count >= 15u) {
    if (LZ4K_LANE == 0) dst[token] = (unsigned char)((15u << 4) | match_nibble);
    op = lz4k_put_length(dst, op, count - 15u);
  } else if (LZ4K_LANE == 0) {
    dst[token] = (unsigned char)((count << 4) | match_nibble);
  }
  // Literal runs are mostly short: a byte a thread. Longer ones 16 bytes a thread, one of those in
  // flight per thread: at two, sm_90's register allocator rematerialises the search round's loop
  // invariants inside the round (43 instructions become 50).
  if (count <= LZ4K_COMPRESS_THREADS) {
    for (unsigned int j = LZ4K_LANE; j < count; j += LZ4K_LANES) dst[op + j] = src.bytes[anchor + j];
  } else {
    lz4k_copy_out<1>(dst + op, src, anchor, count);
  }
  return op + count;
}

// A sequence of at most 32 literals: its token (match part from `length`), literal length, the
// literals src[anchor, + count) and the offset at dst[op...], a byte a thread, one store each (the
// match length's extra bytes, if any, are the caller's); returns the next output byte. Most
// sequences are these: one pass where the token, the literals and the offset took three.
__device__ unsigned int lz4k_put_short_sequence(const Lz4Source& src, unsigned int anchor, unsigned int count,
                                                unsigned int length, unsigned int offset, unsigned char* dst,
                                                unsigned int op) {
  const unsigned int literals_at = count >= 15u ? 2u : 1u;  // after the token and count - 15 (< 255)
  const unsigned int offset_at = literals_at + count;
  const unsigned int token = ((count < 15u ? count : 15u) << 4) | (length < 15u ? length : 15u);
  for (unsigned int j = LZ4K_LANE; j < offset_at + 2u; j += LZ4K_LANES) {
    const bool literal = j >= literals_at && j < offset_at;
    const unsigned int from_src = literal ? src.bytes[anchor + j - literals_at] : 0u;
    const unsigned int offset_byte = j == offset_at ? offset & 0xFFu : offset >> 8;
    dst[op + j] = (unsigned char)(j == 0u ? token : j < literals_at ? count - 15u : literal ? from_src : offset_byte);
  }
  return op + offset_at + 2u;
}

// How many bytes from src[a] equal those from src[b] (b < a), stopping before src[limit]: 4 bytes
// a thread a step (the lowest differing byte of a thread's XOR, as liblz4 counts).
__device__ unsigned int lz4k_match_length(const Lz4Source& src, unsigned int a, unsigned int b, unsigned int limit,
                                          Lz4Lanes& lanes) {
  const unsigned int avail = a < limit ? limit - a : 0u;
  for (unsigned int base = 0;; base += 4u * LZ4K_LANES) {
    const unsigned int at = base + 4u * LZ4K_LANE;
    unsigned int length = avail;  // this thread's first differing byte, avail, or none in its 4 bytes
    if (at + 4u <= avail) {
      const unsigned int diff = src.read32(a + at) ^ src.read32(b + at);
      length = diff != 0u ? at + ((unsigned int)(__ffs((int)diff) - 1) >> 3) : LZ4K_NONE;
    } else if (at < avail) {
      length = at;
      while (length < avail && src.bytes[a + length] == src.bytes[b + length]) ++length;
    }
    const unsigned int found = lanes.min(length);
    if (found != LZ4K_NONE) return found;
  }
}

// Where this thread looks in a search round from ip after `searched` positions without a match:
// ip + t * stride, or ip itself past the last position a match may start at (the lane's result is
// dropped then).
__device__ __forceinline__ unsigned int lz4k_search_at(unsigned int ip, unsigned int searched,
                                                       unsigned int mflimit_plus_one) {
  const unsigned int position = ip + LZ4K_LANE * ((searched >> LZ4K_SKIP_TRIGGER) + 1u);
  return position < mflimit_plus_one ? position : ip;
}

// Compresses src[0, n) into dst with all threads of the block; returns the compressed size, or n
// when that would be n or more (then nothing past the sequences is written: the caller stores the
// block raw).
__device__ unsigned int lz4k_compress_block(const Lz4Source& src, unsigned int n, unsigned char* dst,
                                            Lz4HashTable table, Lz4Lanes& lanes) {
  unsigned int anchor = 0, op = 0;
  if (n >= LZ4K_MFLIMIT + 1u) {
    const unsigned int mflimit_plus_one = n - LZ4K_MFLIMIT + 1u;  // a match starts before it
    const unsigned int match_limit = n - LZ4K_LASTLITERALS;
    unsigned int ip = 0, searched = 0;  // positions looked up since the last match
    // A round's own bytes are read before it: the first round's here, a round after a match beside
    // the match's ip - 2, a round after one without a match during that round (its positions are
    // known then; if the round finds a match the read is dropped). So a round waits on two
    // dependent reads (the table, then the candidate's bytes), not three.
    unsigned long long key = table.key(src, lz4k_search_at(0u, 0u, mflimit_plus_one));
    for (;;) {
      // One round: position ip + t * stride for thread t.
      const unsigned int stride = (searched >> LZ4K_SKIP_TRIGGER) + 1u;
      const unsigned int position = ip + LZ4K_LANE * stride;
      const bool live = position < mflimit_plus_one;
      // The next round's bytes if this round finds no match (a lane's own position when there is
      // no next round: any position of the block will do).
      const unsigned int next_ip = ip + LZ4K_LANES * stride;
      const unsigned int next_at = next_ip < mflimit_plus_one
                                       ? lz4k_search_at(next_ip, searched + LZ4K_LANES, mflimit_plus_one)
                                       : lz4k_search_at(ip, searched, mflimit_plus_one);
      const unsigned long long next_key = table.key(src, next_at);
      // A lane past the end looks up ip instead (its result is dropped): no branch around the
      // lookup. The candidate is what a serial parse would see: the round's latest earlier position
      // with the same hash (inserted before this one's lookup there; its first 4 bytes are that
      // lane's key), else the table's entry, whose bytes are read whatever the candidate is (every
      // entry is a position of the block with 8 bytes after it in the block), so that the exchange
      // runs beside the two dependent loads, not before the second.
      const unsigned int h = table.hash_key(key);
      const unsigned int stored = table.get(h), stored_word = src.read32(stored);
      unsigned int earlier_word = 0;
      const unsigned int earlier = lanes.earlier_same(live, h, position, (unsigned int)key, &earlier_word);
      const unsigned int candidate = earlier != LZ4K_NONE ? earlier : stored;
      const unsigned int candidate_word = earlier != LZ4K_NONE ? earlier_word : stored_word;
      const bool matches =
          live & (candidate < position) & table.in_window(candidate, position) & (candidate_word == (unsigned int)key);
      const unsigned int winner = lanes.first(matches, candidate);
      lanes.put_latest(table, live && lanes.through_first(winner), h, position);
      if (lanes.none(winner)) {
        searched += LZ4K_LANES;
        ip = next_ip;
        if (ip >= mflimit_plus_one) break;
        key = next_key;
        lanes.sync();  // the round's updates before the next round's lookups
        continue;
      }

      unsigned int start = ip + winner * stride, match = lanes.value_of(candidate, winner);
      while (start > anchor && match > 0 && src.bytes[start - 1] == src.bytes[match - 1]) {
        --start;
        --match;
      }
      const unsigned int length =
          lz4k_match_length(src, start + LZ4K_MINMATCH, match + LZ4K_MINMATCH, match_limit, lanes);
      const unsigned int literals = start - anchor, offset = start - match;
      if (literals <= LZ4K_COMPRESS_THREADS) {
        op = lz4k_put_short_sequence(src, anchor, literals, length, offset, dst, op);
      } else {
        op = lz4k_put_literals(src, anchor, literals, length >= 15u ? 15u : length, dst, op);
        if (LZ4K_LANE == 0) {
          dst[op] = (unsigned char)offset;
          dst[op + 1] = (unsigned char)(offset >> 8);
        }
        op += 2;
      }
      if (length >= 15u) op = lz4k_put_length(dst, op, length - 15u);
      ip = anchor = start + LZ4K_MINMATCH + length;
      searched = 0;
      if (ip >= mflimit_plus_one) break;
      // As liblz4: the position two before the match's end goes in, after the round's updates (it
      // is later than any of them); the next round looks up ip itself first.
      key = table.key(src, lz4k_search_at(ip, 0u, mflimit_plus_one));
      lanes.put_one(table, table.hash(src, ip - 2), ip - 2);
      lanes.sync();
    }
  }
  const unsigned int count = n - anchor;
  if (op + lz4k_literals_bytes(count) >= n) return n;
  return lz4k_put_literals(src, anchor, count, 0, dst, op);
}

extern "C" __global__ void lz4_compress(const unsigned char* in_base, const unsigned long long* in_offsets,
                                        const unsigned int* in_lengths, unsigned char* out,
                                        unsigned long long slot_bytes, unsigned int* sizes, unsigned long long count) {
  __shared__ Lz4TableStorage table_storages[LZ4K_BLOCKS_PER_CTA];
  const unsigned int slot = LZ4K_BLOCKS_PER_CTA == 1 ? 0u : threadIdx.x / 32u;  // the warp's block
  const unsigned long long block = (unsigned long long)blockIdx.x * LZ4K_BLOCKS_PER_CTA + slot;
  if (block >= count) return;  // the last thread block's spare warp
  Lz4TableStorage& table_storage = table_storages[slot];
  const unsigned int n = in_lengths[block];
  Lz4Source src;
  src.init(in_base + in_offsets[block]);
  unsigned char* dst = out + block * slot_bytes;

  for (unsigned int j = LZ4K_LANE; j < LZ4K_TABLE_WORDS / 4u; j += LZ4K_LANES)  // 16 bytes a store
    lz4k_store16((unsigned char*)(table_storage.words + 4u * j), 0u, 0u, 0u, 0u);
  Lz4Lanes lanes;
#ifdef LZ4K_WARP_EXCHANGE
  lanes.init();
#else
  __shared__ Lz4Exchange exchange;
  lanes.init(&exchange);
#endif
  lanes.sync();
  Lz4HashTable table;
  table.storage = &table_storage;
  table.small = n < LZ4K_64K_LIMIT;
#ifdef LZ4K_SMALL_BLOCKS_ONLY
  const unsigned int compressed = table.small ? lz4k_compress_block(src, n, dst, table, lanes) : n;
#else
  const unsigned int compressed = lz4k_compress_block(src, n, dst, table, lanes);
#endif
  if (compressed < n) {
    if (LZ4K_LANE == 0) sizes[block] = compressed;
    return;
  }
  // The parse may have written sequences to dst before it found the block does not shrink: other
  // threads' bytes there must land before the raw copy overwrites them.
  lanes.sync();
  lz4k_copy_out<4>(dst, src, 0, n);
  if (LZ4K_LANE == 0) sizes[block] = n | 0x80000000u;
}
