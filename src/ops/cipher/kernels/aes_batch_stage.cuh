// The batch CTR kernel's IO (aes_ctr_batch) through shared memory. Consecutive units tile a
// message and consecutive messages follow each other in the buffer, so the 32 units of a warp
// cover one contiguous byte range of in and out (at most 32 * 512 bytes). The warp moves that
// range as a whole, consecutive lanes on consecutive 16-byte chunks (a load or store of the warp
// covers 512 consecutive bytes, where one lane per 512-byte unit made each touch 32 lines):
//   aes_stage_fetch  at the kernel's start, the lanes queue copies of the range's aligned chunks
//                    into the warp's shared memory (cp.async on sm_80+: the loads run while the
//                    keystream is computed);
//   aes_stage_xor    after a warp barrier, each lane XORs its keystream into its own bytes there;
//   aes_stage_store  after another, the lanes store the chunks to out.
// The chunks follow in's alignment (cipher_io.cuh): the range starts at byte mis of chunk 0, and
// the range's first and last chunk, which it may share with the neighbouring warps' ranges, are
// never loaded or stored whole: their slots start as zero, take the keystream of the range's
// bytes only, and go out byte by byte, each byte XORed with in's byte there. Inside the range a
// chunk shared by two lanes (a unit boundary at a byte that is not a multiple of 16) gets each
// lane's bytes by atomic XORs of words. Positions, lengths, alignments and verdicts are public:
// they choose addresses and branches; the keystream and the data are never an address or a branch
// (tools/ct_sass_check.py checks the machine code, tests/unit/test_aes_sass.cpp).
#pragma once

#include "aes_batch_layout.cuh"
#include "aes_bitslice.cuh"
#include "cipher_io.cuh"

// The public facts of a warp's 32 lanes (their units' bytes, their messages' verdicts), as each
// lane reads them of another. On a GPU they pass by shuffles and a ballot, and warp barriers order
// the lanes' shared memory; the CPU backend has no warps (a block's threads run one after
// another, switching at __syncthreads), so there each thread publishes its facts in shared memory
// before one block barrier, the others read them there, and the warp barriers are block barriers,
// which every thread of the block reaches.
struct AesLaneFacts {
  unsigned long long begin;  // the lane's bytes [begin, begin + n) of in and out
  unsigned int n;
  bool failed;  // GCM open: its message's tag did not match (its bytes are not written)
};

struct AesWarp {
  unsigned int lane;
  AesLaneFacts mine;
#ifndef __CUDA_ARCH__
  const AesLaneFacts* facts;  // the warp's 32 lanes'
#endif

  // Every thread of the block calls this once, at the same point.
  __device__ __forceinline__ static AesWarp of(const AesLaneFacts& mine) {
    AesWarp w;
    w.lane = threadIdx.x & 31u;
    w.mine = mine;
#ifndef __CUDA_ARCH__
    __shared__ AesLaneFacts table[AES_BATCH_THREADS];
    table[threadIdx.x] = mine;
    __syncthreads();
    w.facts = table + (threadIdx.x - w.lane);
#endif
    return w;
  }

  // Lane l's begin and n. Every lane of the warp calls these at the same point.
  __device__ __forceinline__ unsigned long long begin_of(unsigned int l) const {
#ifdef __CUDA_ARCH__
    return __shfl_sync(0xffffffffu, mine.begin, l);
#else
    return facts[l].begin;
#endif
  }
  __device__ __forceinline__ unsigned int n_of(unsigned int l) const {
#ifdef __CUDA_ARCH__
    return __shfl_sync(0xffffffffu, mine.n, l);
#else
    return facts[l].n;
#endif
  }

  // The lanes with bytes of a failed message (bit l: lane l).
  __device__ __forceinline__ unsigned int failed_lanes() const {
#ifdef __CUDA_ARCH__
    return __ballot_sync(0xffffffffu, mine.failed && mine.n > 0);
#else
    unsigned int mask = 0;
    for (unsigned int l = 0; l < 32; ++l) mask |= (facts[l].failed && facts[l].n > 0 ? 1u : 0u) << l;
    return mask;
#endif
  }

  // Orders the lanes' shared memory accesses before the call against those after it.
  __device__ __forceinline__ void sync() const {
#ifdef __CUDA_ARCH__
    __syncwarp();
#else
    __syncthreads();
#endif
  }
};

// A warp's range [begin, end) of in and out in its slots of shared memory.
struct AesStage {
  uint4* slots;             // AES_WARP_SLOTS slots (aes_stage_slot)
  const unsigned char* in;  // the aligned chunk holding in's byte begin
  unsigned char* out;       // out's byte begin - mis: aligned where in_phase
  unsigned long long begin;
  unsigned int mis;     // the range's first byte within chunk 0
  unsigned int bytes;   // end - begin (<= 32 * 512)
  unsigned int chunks;  // aligned chunks the range touches
  bool in_phase;        // out has in's alignment: whole chunks go out as one 16-byte store
};

__device__ __forceinline__ AesStage aes_stage_of(uint4* slots, const unsigned char* in, unsigned char* out,
                                                 unsigned long long begin, unsigned long long end) {
  AesStage st;
  st.slots = slots;
  st.begin = begin;
  st.mis = static_cast<unsigned int>(reinterpret_cast<unsigned long long>(in + begin) & 15u);
  st.in = in + begin - st.mis;
  st.out = out + begin - st.mis;
  st.bytes = static_cast<unsigned int>(end - begin);
  st.chunks = (st.mis + st.bytes + 15u) / 16u;
  st.in_phase = ((reinterpret_cast<unsigned long long>(in) ^ reinterpret_cast<unsigned long long>(out)) & 15u) == 0;
  return st;
}

// Where byte `begin` of in and out lies in the stage: 16 * chunk + byte.
__device__ __forceinline__ unsigned int aes_stage_at(const AesStage& st, unsigned long long begin) {
  return static_cast<unsigned int>(begin - st.begin) + st.mis;
}

// Chunk j's slot: a pad slot after every 32 chunks, so that lanes whose chunks lie 512 bytes apart
// (the units of one message) reach different banks with their 16-byte accesses, while 8
// consecutive chunks from a multiple of 8 (a quarter warp of the warp-wide passes) stay in one
// 128-byte row. Chunks 32 apart have slots 33 apart.
__device__ __forceinline__ unsigned int aes_stage_slot(unsigned int j) {
  return j + (j >> 5);
}

// The range's whole chunks are [lo, hi); chunk 0 (if mis != 0) and chunk hi (if it is one of the
// chunks) are the range's partial first and last chunk, the same chunk when hi == 0 < lo.
__device__ __forceinline__ unsigned int aes_stage_whole_lo(const AesStage& st) {
  return st.mis != 0u ? 1u : 0u;
}
__device__ __forceinline__ unsigned int aes_stage_whole_hi(const AesStage& st) {
  return (st.mis + st.bytes) >> 4;
}
// Whether chunk hi is a partial last chunk that is not the first one too.
__device__ __forceinline__ bool aes_stage_has_last(const AesStage& st) {
  const unsigned int lo = aes_stage_whole_lo(st), hi = aes_stage_whole_hi(st);
  return hi < st.chunks && (hi != 0 || lo == 0);
}

// 16 bytes from global memory (16-byte aligned) to shared memory: on sm_80+ a copy that completes
// in the background (cp.async, through L2 only) until aes_copy_async_wait; the CPU backend copies.
__device__ __forceinline__ void aes_copy_async16(uint4* to, const unsigned char* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned int shared_to = static_cast<unsigned int>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_to), "l"(from) : "memory");
#else
  *to = *reinterpret_cast<const uint4*>(from);
#endif
}

// Waits for this thread's copies (a barrier after it makes every thread's visible).
__device__ __forceinline__ void aes_copy_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// Queues the range's whole chunks into their slots, the lanes on consecutive chunks, and zeroes
// the first and last chunk's slots.
__device__ __forceinline__ void aes_stage_fetch(const AesStage& st, const AesWarp& warp) {
  const unsigned int lo = aes_stage_whole_lo(st), hi = aes_stage_whole_hi(st);
  unsigned int j = lo + warp.lane;
  uint4* slot = st.slots + aes_stage_slot(j);
  const unsigned char* from = st.in + 16u * j;
  for (; j < hi; j += 32, slot += 33, from += 16 * 32) aes_copy_async16(slot, from);
  if (warp.lane == 0 && lo != 0) st.slots[aes_stage_slot(0)] = make_uint4(0u, 0u, 0u, 0u);
  if (warp.lane == 31 && aes_stage_has_last(st)) st.slots[aes_stage_slot(hi)] = make_uint4(0u, 0u, 0u, 0u);
}

// Bytes [lo, hi) of a word (0 <= lo < hi <= 4) as a mask.
__device__ __forceinline__ unsigned int aes_byte_span(int lo, int hi) {
  return (0xffffffffu >> (32 - 8 * (hi - lo))) << (8 * lo);
}

// Bytes [from, to) of y XORed into a slot that other lanes' bytes share: atomic XORs of the words
// that hold any of them.
__device__ __forceinline__ void aes_stage_xor_part(uint4* slot, int from, int to, const unsigned int* y) {
  unsigned int* words = reinterpret_cast<unsigned int*>(slot);
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int lo = from - 4 * q < 0 ? 0 : (from - 4 * q > 4 ? 4 : from - 4 * q);
    const int hi = to - 4 * q < 0 ? 0 : (to - 4 * q > 4 ? 4 : to - 4 * q);
    if (lo < hi) atomicXor(words + q, y[q] & aes_byte_span(lo, hi));
  }
}

// Keystream chunk c (0..32) of a range that starts mis = 16 - o bytes into a 16-byte chunk: the
// bytes at offset o of block c - 1 || block c of the transposed state s (32 blocks, s[32 w + k] word
// w of block k; the blocks before 0 and after 31 read as zero). The direct and the staged CTR IO
// both XOR their chunks with it.
__device__ __forceinline__ void aes_keystream_chunk(const aes_word* s, int c, unsigned int o, unsigned int* y) {
  unsigned int lo[4], hi[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    lo[w] = c > 0 ? s[32 * w + c - 1] : 0u;
    hi[w] = c < 32 ? s[32 * w + c] : 0u;
  }
  cipher_extract16(lo, hi, o, y);
}

// The lane's n bytes (0 < n <= 512) at byte `at` of the stage (aes_stage_at), XORed with its 32
// keystream blocks (the transposed state s, aes_ctr_keystream) and the last round key k, as
// aes_ctr_xor_chunks does in global memory: chunk c = 0..32 of the lane's bytes takes the
// keystream at offset 16 - mis of block c - 1 || block c. Eight slots are read before the first of
// their writes, so that one read at a time does not wait 33 times. The reads are unconditional,
// at addresses from arithmetic alone (no predicated address that tools/ct_sass_check.py could not
// follow). A chunk that is not the lane's whole (its first or last chunk, or past its bytes) is
// another lane's too, written by it meanwhile: the read goes to the lane's own pad slot instead
// (slot 33 l + 32, which no chunk has) and is not used.
__device__ __forceinline__ void aes_stage_xor(const AesStage& st, unsigned int lane, unsigned int at, unsigned int n,
                                              const aes_word* s, const unsigned int* k) {
  const unsigned int mis = at & 15u, o = 16u - mis, end = mis + n;  // the bytes are [mis, end) of chunks 0..
  const unsigned int first = at >> 4;
  const unsigned int whole_lo = mis != 0u ? 1u : 0u, whole_hi = end >> 4;  // the lane's whole chunks
  const unsigned int pad = 33u * lane + 32u;
  unsigned int key[4];
  cipher_extract16(k, k, o, key);
#pragma unroll
  for (int g = 0; g <= 32; g += 8) {
    uint4 x[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const unsigned int c = g + i;
      if (c <= 32) x[i] = st.slots[c >= whole_lo && c < whole_hi ? aes_stage_slot(first + c) : pad];
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const unsigned int c = g + i;
      if (c > 32 || 16u * c >= end) break;
      unsigned int y[4];
      aes_keystream_chunk(s, static_cast<int>(c), o, y);
      uint4* slot = st.slots + aes_stage_slot(first + c);
      if (c >= whole_lo && c < whole_hi) {
        // One three-input XOR a word: data, keystream, key.
        *slot =
            make_uint4(x[i].x ^ y[0] ^ key[0], x[i].y ^ y[1] ^ key[1], x[i].z ^ y[2] ^ key[2], x[i].w ^ y[3] ^ key[3]);
      } else {
        const int from = c == 0 ? static_cast<int>(mis) : 0;
        const int to = end - 16u * c >= 16u ? 16 : static_cast<int>(end - 16u * c);
#pragma unroll
        for (int w = 0; w < 4; ++w) y[w] ^= key[w];
        aes_stage_xor_part(slot, from, to, y);
      }
    }
  }
}

// The bytes of chunk j (bit i: byte i) that belong to the failed lanes' messages (failed, bit l:
// lane l): not to be written. Every lane of the warp calls this at the same point.
__device__ __forceinline__ unsigned int aes_stage_skip(const AesStage& st, const AesWarp& warp, unsigned int failed,
                                                       unsigned int j) {
  unsigned int skip = 0;
  for (unsigned int rest = failed; rest != 0; rest &= rest - 1) {
    const unsigned int l = __ffs(rest) - 1;
    const unsigned int from = aes_stage_at(st, warp.begin_of(l)), to = from + warp.n_of(l);
    const int lo = static_cast<int>(from) - static_cast<int>(16 * j),
              hi = static_cast<int>(to) - static_cast<int>(16 * j);
    const int a = lo < 0 ? 0 : lo, b = hi > 16 ? 16 : hi;
    if (a < b) skip |= (0xffffu >> (16 - (b - a))) << a;
  }
  return skip;
}

// Chunk j's slot to out byte by byte, the range's bytes that skip does not name only: the range's
// first or last chunk (the slot holds the keystream: XORed with in's bytes here), out in another
// phase than in, or bytes of failed messages.
__device__ __forceinline__ void aes_stage_store_bytes(const AesStage& st, unsigned int j, unsigned int skip) {
  const uint4 v = st.slots[aes_stage_slot(j)];
  const bool whole = j >= aes_stage_whole_lo(st) && j < aes_stage_whole_hi(st);
  const unsigned long long lo = (static_cast<unsigned long long>(v.y) << 32) | v.x;
  const unsigned long long hi = (static_cast<unsigned long long>(v.w) << 32) | v.z;
  for (unsigned int i = 0; i < 16; ++i) {
    const unsigned int at = 16u * j + i;
    if (at < st.mis || at >= st.mis + st.bytes || ((skip >> i) & 1u) != 0) continue;
    unsigned char b = static_cast<unsigned char>(i < 8 ? lo >> (8 * i) : hi >> (8 * (i - 8)));
    if (!whole) b ^= st.in[at];
    st.out[at] = b;
  }
}

// The staged range to out. Without failed lanes, in phase: the whole chunks by the lanes on
// consecutive chunks, four slots read before their stores. Otherwise chunk by chunk, rows of 32
// chunks (every lane through the same rows: aes_stage_skip exchanges). The first and last chunk
// byte by byte.
__device__ __forceinline__ void aes_stage_store(const AesStage& st, const AesWarp& warp) {
  const unsigned int lo = aes_stage_whole_lo(st), hi = aes_stage_whole_hi(st);
  const unsigned int failed = warp.failed_lanes();
  if (failed == 0 && st.in_phase) {
    unsigned int j = lo + warp.lane;
    const uint4* slot = st.slots + aes_stage_slot(j);
    uint4* to = reinterpret_cast<uint4*>(st.out) + j;
    for (; j < hi; j += 4 * 32, slot += 4 * 33, to += 4 * 32) {
      uint4 v[4];
#pragma unroll
      for (unsigned int i = 0; i < 4; ++i)
        if (j + 32 * i < hi) v[i] = slot[33 * i];
#pragma unroll
      for (unsigned int i = 0; i < 4; ++i)
        if (j + 32 * i < hi) to[32 * i] = v[i];
    }
  } else {
    for (unsigned int row = lo; row < hi; row += 32) {
      const unsigned int j = row + warp.lane;
      const unsigned int skip = aes_stage_skip(st, warp, failed, j);
      if (j >= hi) continue;
      if (skip == 0 && st.in_phase)
        reinterpret_cast<uint4*>(st.out)[j] = st.slots[aes_stage_slot(j)];
      else
        aes_stage_store_bytes(st, j, skip);
    }
  }
  const unsigned int skip_first = aes_stage_skip(st, warp, failed, 0);
  const unsigned int skip_last = aes_stage_skip(st, warp, failed, hi);
  if (warp.lane == 0 && lo != 0) aes_stage_store_bytes(st, 0, skip_first);
  if (warp.lane == 31 && aes_stage_has_last(st)) aes_stage_store_bytes(st, hi, skip_last);
}
