// AES-CTR and AES-GCM kernels, constant-time (bitsliced AES, multiply-with-holes GHASH):
//   aes_setup   one thread per message: key schedule, GCM's H, J0, E_K(J0) and hash-key powers;
//   aes_setup_blocks  GCM batches: H and E_K(J0) of 16 messages per thread, bitsliced across them;
//   aes_ctr     32 blocks per thread: counter blocks built bitsliced, encrypted, XORed with data;
//   aes_ctr_batch  aes_ctr for batches, the data fetched early and moved through shared memory;
//   aes_ghash   GHASH over AAD || C || lengths, in chunks of blocks combined with powers of H;
//   aes_ghash_mma  bulk GHASH of whole chunks of data as 1-bit matrix products on the tensor cores
//               (CUDA sm_80 and later; aes_ghash takes the rest of the stream);
//   aes_gcm_tag one thread per message: tag = E_K(J0) ^ GHASH, written or compared.
// Positions, lengths and verdicts are public and may steer branches; keys, data and H never do.
#include "aes_batch_stage.cuh"
#include "aes_gf128.cuh"
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#include "aes_ghash_mma.cuh"
#endif
#include "aes_key.cuh"
#include "aes_state.cuh"
#include "cipher_io.cuh"

#define AES_MODE_CTR 0u
#define AES_MODE_GCM 1u
// GCM with 12-byte IVs, H and E_K(J0) left to aes_setup_blocks (batches): J0 + 1 as the counter.
#define AES_MODE_GCM_LANES 2u

__device__ __forceinline__ unsigned int aes_load_be32(const unsigned char* p) {
  return (static_cast<unsigned int>(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
}

__device__ __forceinline__ unsigned int aes_bswap32(unsigned int x) {
  return __byte_perm(x, 0, 0x0123);
}

// Up to 16 bytes at p as little-endian words, zero-padded.
__device__ __forceinline__ void aes_load_block(const unsigned char* p, unsigned long long bytes, unsigned int* w) {
  if (bytes >= 16 && (reinterpret_cast<unsigned long long>(p) & 15) == 0) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
    return;
  }
  // Byte by byte into two 64-bit halves (no runtime-indexed array: it would live in local memory).
  unsigned long long lo = 0, hi = 0;
  const unsigned int n = bytes < 16 ? static_cast<unsigned int>(bytes) : 16u;
  for (unsigned int i = 0; i < n; ++i) {
    const unsigned long long byte = p[i];
    if (i < 8)
      lo |= byte << (8 * i);
    else
      hi |= byte << (8 * (i - 8));
  }
  w[0] = static_cast<unsigned int>(lo);
  w[1] = static_cast<unsigned int>(lo >> 32);
  w[2] = static_cast<unsigned int>(hi);
  w[3] = static_cast<unsigned int>(hi >> 32);
}

// Bit q of the lane number k, over the 32 lanes: lanes k with bit q set.
__device__ __forceinline__ aes_word aes_lane_bits(int q) {
  return q == 0 ? 0xaaaaaaaau : q == 1 ? 0xccccccccu : q == 2 ? 0xf0f0f0f0u : q == 3 ? 0xff00ff00u : 0xffff0000u;
}

// The state word of counter bit p (0 = least significant): bit p % 8 of block byte 15 - p / 8.
__device__ __forceinline__ int aes_counter_word(int p) {
  return 8 * (15 - (p >> 3)) + (p & 7);
}

// Message m is bytes [start, start + length) of its buffer.
__device__ __forceinline__ void aes_message_span(const unsigned long long* offsets, unsigned long long fixed_bytes,
                                                 unsigned long long m, unsigned long long& start,
                                                 unsigned long long& length) {
  if (offsets != nullptr) {
    start = offsets[m];
    length = offsets[m + 1] - start;
  } else {
    start = m * fixed_bytes;
    length = fixed_bytes;
  }
}

// Precomputed round-key masks of one message (bulk): 128 words for each of up to 15 round keys.
#define AES_MASK_WORDS (128 * 15)

// The part of a message's setup that needs no AES block: its round keys and its counter (CTR: the
// 16-byte counter block; AES_MODE_GCM_LANES: J0 + 1 from a 12-byte IV, whose H and E_K(J0)
// aes_setup_blocks computes). Returns the number of rounds.
__device__ __forceinline__ int aes_setup_keys(AesState& st, const unsigned char* key, unsigned int key_bytes,
                                              const unsigned char* iv, unsigned int mode) {
  const int rounds = aes_expand_key(key, key_bytes, st.round_keys);
  st.rounds = static_cast<unsigned int>(rounds);
  if (mode == AES_MODE_CTR) {
    st.counter_bits = 128;
    for (int i = 0; i < 4; ++i) st.counter[i] = aes_load_be32(iv + 4 * i);
    return rounds;
  }
  st.counter_bits = 32;
  st.ghash.lo = st.ghash.hi = 0;
  if (mode == AES_MODE_GCM_LANES) {  // J0 = IV || 00 00 00 01; the data starts at inc32(J0)
    for (int i = 0; i < 3; ++i) st.counter[i] = aes_load_be32(iv + 4 * i);
    st.counter[3] = 2;
  }
  return rounds;
}

// Batches in AES_MODE_CTR or AES_MODE_GCM_LANES, one thread a message: aes_setup_keys only. A kernel
// of its own: aes_setup's single-block AES (a 128-word bitsliced state) would give it 255 registers
// and 8 warps an SM for a step that needs neither. Launch: AES_SETUP_BATCH_THREADS threads a block.
// Each thread builds its message's state in shared memory, and the block then stores its
// messages' states (consecutive in `states`) as one contiguous range, consecutive threads on
// consecutive 8-byte words: a thread storing its own 312-byte state put each warp store on 32
// sectors 312 bytes apart, a quarter of each written, and the kernel ran at ~10x its instruction
// count (230 us for 2^18 messages on an H100, 15% of an AES-128-CTR batch call).
static_assert(sizeof(AesState) % 8 == 0, "aes_setup_batch stores states as 8-byte words");
extern "C" __global__ void __launch_bounds__(AES_SETUP_BATCH_THREADS)
    aes_setup_batch(AesState* states, const unsigned char* keys, unsigned int key_bytes, const unsigned char* ivs,
                    unsigned int iv_bytes, unsigned int mode, unsigned long long count) {
  __shared__ AesState staged[AES_SETUP_BATCH_THREADS];
  const unsigned long long first = static_cast<unsigned long long>(blockIdx.x) * AES_SETUP_BATCH_THREADS;
  const unsigned long long m = first + threadIdx.x;
  if (m < count) {
    AesState& st = staged[threadIdx.x];
    aes_setup_keys(st, keys + m * key_bytes, key_bytes, ivs + m * iv_bytes, mode);
    // The fields that this setup leaves alone are stored too: zero, not whatever was there.
    for (int i = 0; i < 4; ++i) st.tag_mask[i] = 0;
    st.h.lo = st.h.hi = 0;
    if (mode == AES_MODE_CTR) st.ghash.lo = st.ghash.hi = 0;
  }
  __syncthreads();
  const unsigned long long left = count - first;
  const unsigned int messages =
      left < AES_SETUP_BATCH_THREADS ? static_cast<unsigned int>(left) : AES_SETUP_BATCH_THREADS;
  const unsigned int words = messages * static_cast<unsigned int>(sizeof(AesState) / 8);
  const unsigned long long* from = reinterpret_cast<const unsigned long long*>(staged);
  unsigned long long* to = reinterpret_cast<unsigned long long*>(states + first);
  for (unsigned int i = threadIdx.x; i < words; i += AES_SETUP_BATCH_THREADS) to[i] = from[i];
}

// mode AES_MODE_CTR: ivs holds 16-byte counter blocks. AES_MODE_GCM: ivs holds iv_bytes-byte IVs,
// and ghash_chunk_blocks > 0 asks for the powers H^(chunk_blocks * 2^s) of bulk GHASH (to powers,
// AES_GHASH_POWERS per message); masks, if not null, receives each message's round keys as masks
// (AES_MASK_WORDS words per message).
extern "C" __global__ void aes_setup(AesState* states, const unsigned char* keys, unsigned int key_bytes,
                                     const unsigned char* ivs, unsigned int iv_bytes, unsigned int mode,
                                     unsigned long long count, unsigned long long ghash_chunk_blocks, aes_word* masks,
                                     AesGf128* powers) {
  const unsigned long long m = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= count) return;
  AesState& st = states[m];
  const unsigned char* iv = ivs + m * iv_bytes;
  const int rounds = aes_setup_keys(st, keys + m * key_bytes, key_bytes, iv, mode);
  if (masks != nullptr) {
    const AesKeyBits bits{st.round_keys};
    for (int r = 0; r <= rounds; ++r)
      for (int j = 0; j < 128; ++j) masks[m * AES_MASK_WORDS + 128 * r + j] = bits.mask(r, j);
  }
  if (mode != AES_MODE_GCM) return;
  const unsigned int zero[4] = {0, 0, 0, 0};
  unsigned int w[4];
  aes_encrypt_block(st.round_keys, rounds, zero, w);
  const AesGf128 h = aes_gf128_from_words(w);
  st.h = h;
  unsigned int j0[4];
  if (iv_bytes == 12) {
    aes_load_block(iv, 12, j0);
    j0[3] = 0x01000000u;  // bytes 00 00 00 01
  } else {
    // J0 = GHASH_H(IV || 0-padding || 0^64 || [8 * len(IV)]_64)
    AesGf128 y = {0, 0};
    for (unsigned int at = 0; at < iv_bytes; at += 16) {
      aes_load_block(iv + at, iv_bytes - at, w);
      const AesGf128 x = aes_gf128_from_words(w);
      y.lo ^= x.lo;
      y.hi ^= x.hi;
      y = aes_gf128_mul(y, h);
    }
    const unsigned long long bits = 8ull * iv_bytes;
    const unsigned int len[4] = {0, 0, aes_bswap32(static_cast<unsigned int>(bits >> 32)),
                                 aes_bswap32(static_cast<unsigned int>(bits))};
    const AesGf128 x = aes_gf128_from_words(len);
    y.lo ^= x.lo;
    y.hi ^= x.hi;
    y = aes_gf128_mul(y, h);
    aes_gf128_to_words(y, j0);
  }
  aes_encrypt_block(st.round_keys, rounds, j0, st.tag_mask);
  for (int i = 0; i < 4; ++i) st.counter[i] = aes_bswap32(j0[i]);
  st.counter[3] += 1;  // inc32(J0): the first data block
  if (ghash_chunk_blocks > 0) {
    // H^chunk_blocks, then repeated squares.
    AesGf128 p = aes_gf128_pow(h, ghash_chunk_blocks);
    for (int s = 0; s < AES_GHASH_POWERS; ++s) {
      powers[m * AES_GHASH_POWERS + s] = p;
      p = aes_gf128_mul(p, p);
    }
  }
}

// No round key (the lanes' keys are added apart, aes_add_lane_keys).
struct AesNoKeys {
  __device__ __forceinline__ aes_word mask(int, int) const { return 0; }
};

// XORs round key r of messages m0 .. m0 + 15 into the bitsliced state, lanes 2 k and 2 k + 1 taking
// message m0 + k's: for each key word g, the 32 lanes' words transposed (aes_transpose32) are the
// masks of state words 32 g .. 32 g + 31. Messages past count get a zero key. The addresses depend
// on message indices and r only.
__device__ __forceinline__ void aes_add_lane_keys(aes_word* s, const AesState* states, unsigned long long m0,
                                                  unsigned long long count, int r) {
  // One address for the 16 messages (constant offsets from it), not one per message.
  const unsigned int* key = states[m0].round_keys + 4 * r;
  constexpr int stride = sizeof(AesState) / sizeof(unsigned int);
  const unsigned long long here = count - m0;  // messages m0 + k with k < here exist
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    aes_word a[32];
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      const aes_word w = static_cast<unsigned long long>(k) < here ? key[k * stride + g] : 0u;
      a[2 * k] = w;
      a[2 * k + 1] = w;
    }
    aes_transpose32(a);
#pragma unroll
    for (int i = 0; i < 32; ++i) s[32 * g + i] ^= a[i];
  }
}

// GCM batches (after aes_setup in AES_MODE_GCM_LANES): H = E_K(0^128) and E_K(J0) of 16 messages
// per thread in one bitsliced pass, lanes 2 k / 2 k + 1 the zero block / J0 of message 16 j + k
// under that message's round keys. One 32-lane AES for 16 messages, where aes_setup runs two per
// message using one lane of each. Every message of the batch has the same key size.
extern "C" __global__ void __launch_bounds__(128) aes_setup_blocks(AesState* states, unsigned long long count) {
  const unsigned long long m0 = 16 * (static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x);
  if (m0 >= count) return;
  const int rounds = static_cast<int>(states[m0].rounds);
  aes_word s[128];
  // Round key 0 XOR the input blocks: lane 2 k zero, lane 2 k + 1 J0 (the counter minus one).
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    aes_word a[32];
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      const bool here = m0 + k < count;
      const AesState& st = states[here ? m0 + k : m0];
      const aes_word key = here ? st.round_keys[g] : 0u;
      const unsigned int j0 = aes_bswap32(g == 3 ? st.counter[3] - 1u : st.counter[g]);
      a[2 * k] = key;
      a[2 * k + 1] = key ^ (here ? j0 : 0u);
    }
    aes_transpose32(a);
#pragma unroll
    for (int i = 0; i < 32; ++i) s[32 * g + i] = a[i];
  }
#pragma unroll 1
  for (int r = 1; r < rounds; ++r) {
    aes_sub_bytes(s);
    aes_shift_mix_add(s, AesNoKeys{}, r);
    aes_add_lane_keys(s, states, m0, count, r);
  }
  aes_sub_bytes(s);
  aes_shift_add<false>(s, AesNoKeys{}, rounds);
  aes_add_lane_keys(s, states, m0, count, rounds);
  aes_transpose_state(s);  // s[32 g + l]: word g of lane l's block
#pragma unroll
  for (int k = 0; k < 16; ++k) {
    if (m0 + k >= count) break;
    AesState& st = states[m0 + k];
    const unsigned int h[4] = {s[2 * k], s[32 + 2 * k], s[64 + 2 * k], s[96 + 2 * k]};
    st.h = aes_gf128_from_words(h);
#pragma unroll
    for (int g = 0; g < 4; ++g) st.tag_mask[g] = s[32 * g + 2 * k + 1];
  }
}

// Block k (k < 32) of the transposed state s, XORed with the last round key (k0..k3) and with the
// 16 bytes at src + 16 * Stride * k, to dst at the same offset: all 32 blocks whole, 16-byte
// aligned. Eight loads are issued before the first of their stores: in and out may be the same
// buffer, so the compiler may not move a load above an earlier store itself, and one load at a
// time would wait for memory 32 times.
template <unsigned int Stride>
__device__ __forceinline__ void aes_ctr_xor_blocks(const unsigned char* src, unsigned char* dst, const aes_word* s,
                                                   aes_word k0, aes_word k1, aes_word k2, aes_word k3) {
  const uint4* in4 = reinterpret_cast<const uint4*>(src);
  uint4* out4 = reinterpret_cast<uint4*>(dst);
#pragma unroll
  for (int g = 0; g < 32; g += 8) {
    uint4 x[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = in4[Stride * (g + k)];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int b = g + k;
      out4[Stride * b] =
          make_uint4(x[k].x ^ s[b] ^ k0, x[k].y ^ s[32 + b] ^ k1, x[k].z ^ s[64 + b] ^ k2, x[k].w ^ s[96 + b] ^ k3);
    }
  }
}

// The thread's n bytes (n <= 512: its 32 keystream blocks) at alignment mis (0..15) of 16, in and
// out in the same phase (batch messages start anywhere): in and out point at the aligned chunk
// holding the first byte, and chunk c = 0..32 of the range gets the keystream bytes at offset
// 16 - mis of block c - 1 || block c (cipher_io.cuh). Whole chunks move with 16-byte loads and
// stores, eight loads ahead of their stores (as aes_ctr_xor_blocks); the first and the last chunk,
// shared with the neighbouring range, byte by byte. The last round key (k, the same in every block)
// is shifted once: the shift is linear.
__device__ __forceinline__ void aes_ctr_xor_chunks(const unsigned char* in, unsigned char* out, unsigned long long n,
                                                   unsigned int mis, const aes_word* s, const unsigned int* k) {
  const unsigned int o = 16u - mis;
  unsigned int key[4];
  cipher_extract16(k, k, o, key);
#pragma unroll
  for (int g = 0; g <= 32; g += 8) {
    unsigned int x[8][4];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      int from, to;
      if (g + i <= 32 && cipher_chunk_bounds(g + i, n, mis, from, to)) cipher_load_chunk(in + 16 * (g + i), x[i]);
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int c = g + i;
      if (c > 32) break;
      int from, to;
      const bool whole = cipher_chunk_bounds(c, n, mis, from, to);
      if (!whole && from >= to) continue;
      unsigned int y[4];
      aes_keystream_chunk(s, c, o, y);
      if (whole) {
#pragma unroll
        for (int w = 0; w < 4; ++w) y[w] ^= x[i][w] ^ key[w];
        cipher_store_chunk(out + 16 * c, y);
      } else {
        unsigned int part[4];
        cipher_load_part(in + 16 * c, from, to, part);
#pragma unroll
        for (int w = 0; w < 4; ++w) y[w] ^= part[w] ^ key[w];
        cipher_store_part(out + 16 * c, from, to, y);
      }
    }
  }
}

// Thread u's message m and its unit v there: units_per_message units each, or unit_starts[m] ..
// unit_starts[m + 1] - 1 (the last m with unit_starts[m] <= u, by binary search).
__device__ __forceinline__ void aes_unit_of(unsigned long long u, unsigned long long count,
                                            unsigned long long units_per_message, const unsigned long long* unit_starts,
                                            unsigned long long& m, unsigned long long& v) {
  if (unit_starts != nullptr) {
    unsigned long long lo = 0, hi = count;
    while (hi - lo > 1) {
      const unsigned long long mid = (lo + hi) / 2;
      if (unit_starts[mid] <= u)
        lo = mid;
      else
        hi = mid;
    }
    m = lo;
    v = u - unit_starts[m];
  } else {
    m = u / units_per_message;
    v = u % units_per_message;
  }
}

// The keystream of blocks first, first + stride, .., first + 31 stride of the message of st, but
// for the last AddRoundKey (the caller XORs the last round key's words in, the same for every
// block), transposed: s[32 g + k] is little-endian word g of block k. Masked: the round keys come
// from aes_setup's precomputed masks of the message, else from the key bytes of the state.
template <bool Masked>
__device__ __forceinline__ void aes_ctr_keystream(const AesState& st, const aes_word* masks, unsigned long long first,
                                                  unsigned int stride, aes_word* s) {
  AesKeyBits key_bits{st.round_keys};
  AesKeyMasks key_masks{masks};

  // Counter of block `first`: the message's first counter plus `first`, modulo 2^counter_bits.
  unsigned int c[4] = {st.counter[0], st.counter[1], st.counter[2], st.counter[3]};
  if (st.counter_bits == 32) {
    c[3] += static_cast<unsigned int>(first);
  } else {
    unsigned long long low = (static_cast<unsigned long long>(c[2]) << 32) | c[3];
    unsigned long long high = (static_cast<unsigned long long>(c[0]) << 32) | c[1];
    const unsigned long long sum = low + first;
    high += sum < low;
    c[0] = static_cast<unsigned int>(high >> 32);
    c[1] = static_cast<unsigned int>(high);
    c[2] = static_cast<unsigned int>(sum >> 32);
    c[3] = static_cast<unsigned int>(sum);
  }
  // Block k's counter is c + stride * k (block k in bit k of every state word), modulo
  // 2^counter_bits. Counter bit p is bit p % 8 of block byte 15 - p / 8 (big-endian): state word
  // aes_counter_word(p). The lane numbers stride * k (< 2^10) are added to bits 0..9 by a bitsliced
  // ripple-carry add (the constant lane patterns at bits log2(stride)..), whose carry out of bit 9
  // is the word `carry` (the blocks that carry). A carry into bit 10 flips the bits that adding
  // 2^10 to c flips (`flip`, computed on the uniform c), so above bit 9 block k's bit is
  // bit(c) ^ (carry_k & bit(flip)), and only bits 10..31 need that term unless the flip reaches
  // past bit 31 (counter values are public: branching on them is allowed). Round key 0 is XORed
  // into c's words first, so that AddRoundKey costs nothing per bit.
  const unsigned int* key0 = st.round_keys;
  unsigned int flip[4] = {0, 0, 0, 0};
  if (st.counter_bits == 32) {
    flip[3] = c[3] ^ (c[3] + 1024u);
  } else {
    const unsigned long long low = (static_cast<unsigned long long>(c[2]) << 32) | c[3];
    const unsigned long long high = (static_cast<unsigned long long>(c[0]) << 32) | c[1];
    const unsigned long long low2 = low + 1024u, high2 = high + (low2 < low ? 1u : 0u);
    flip[0] = static_cast<unsigned int>((high ^ high2) >> 32);
    flip[1] = static_cast<unsigned int>(high ^ high2);
    flip[2] = static_cast<unsigned int>((low ^ low2) >> 32);
    flip[3] = static_cast<unsigned int>(low ^ low2);
  }
  // State-order words (word g: block bytes 4 g .. 4 g + 3, little-endian) of c ^ key 0 and flip.
  unsigned int cw[4], fw[4];
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    cw[g] = aes_bswap32(c[g]) ^ key0[g];
    fw[g] = aes_bswap32(flip[g]);
  }
  const bool lanes_low = stride == 1;  // lane numbers at counter bits 0..4 (else 5..9)
  aes_word carry = 0;
#pragma unroll
  for (int p = 0; p < 10; ++p) {
    const int j = aes_counter_word(p);
    const aes_word b = aes_bit_mask(c[3], p);
    const aes_word k = p < 5 ? (lanes_low ? aes_lane_bits(p) : 0u) : (lanes_low ? 0u : aes_lane_bits(p - 5));
    s[j] = aes_bit_mask(cw[j >> 5], j & 31) ^ k ^ carry;
    carry = (b & k) | (carry & (b ^ k));
  }
#pragma unroll
  for (int p = 10; p < 32; ++p) {
    const int j = aes_counter_word(p);
    s[j] = aes_bit_mask(cw[j >> 5], j & 31) ^ (carry & aes_bit_mask(fw[j >> 5], j & 31));
  }
  if ((flip[0] | flip[1] | flip[2]) != 0) {  // the carry runs past bit 31 (rare)
#pragma unroll
    for (int p = 32; p < 128; ++p) {
      const int j = aes_counter_word(p);
      s[j] = aes_bit_mask(cw[j >> 5], j & 31) ^ (carry & aes_bit_mask(fw[j >> 5], j & 31));
    }
  } else {
#pragma unroll
    for (int p = 32; p < 128; ++p) {
      const int j = aes_counter_word(p);
      s[j] = aes_bit_mask(cw[j >> 5], j & 31);
    }
  }
  if (Masked)
    aes_encrypt_rounds<false>(s, key_masks, static_cast<int>(st.rounds));
  else
    aes_encrypt_rounds<false>(s, key_bits, static_cast<int>(st.rounds));
  aes_transpose_state(s);
}

// Thread u covers 32 blocks of one message. stride 1: blocks 32 v .. 32 v + 31 of the message's
// unit v (batch). stride 32: a warp covers 1024 consecutive blocks and lane t of it the blocks
// t, t + 32, ... (bulk: each store instruction of a warp writes 512 consecutive bytes).
// Messages use units_per_message units each, or unit_starts[m] .. unit_starts[m + 1] - 1.
// verdicts (GCM open): messages whose verdict is 0 are skipped (not written). Masked: the round
// keys come from aes_setup's precomputed masks, else from the key bytes of the state.
template <bool Masked>
__device__ __forceinline__ void aes_ctr_body(const AesState* states, const unsigned char* in, unsigned char* out,
                                             const unsigned long long* offsets, unsigned long long fixed_bytes,
                                             unsigned long long count, unsigned long long units_per_message,
                                             const unsigned long long* unit_starts, unsigned long long total_units,
                                             unsigned int stride, const unsigned char* verdicts,
                                             const aes_word* masks) {
  const unsigned long long u = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (u >= total_units) return;
  unsigned long long m, v;
  aes_unit_of(u, count, units_per_message, unit_starts, m, v);
  if (verdicts != nullptr && verdicts[m] == 0) return;
  unsigned long long start, length;
  aes_message_span(offsets, fixed_bytes, m, start, length);
  const unsigned long long blocks = (length + 15) / 16;
  const unsigned long long first = stride == 1 ? 32 * v : 1024 * (v >> 5) + (v & 31);
  if (first >= blocks) return;
  const AesState& st = states[m];
  aes_word s[128];
  aes_ctr_keystream<Masked>(st, masks + (Masked ? m * AES_MASK_WORDS : 0), first, stride, s);
  // The last AddRoundKey, left out above: word g of every block gets the last round key's word g.
  const unsigned int* last_key = st.round_keys + 4 * st.rounds;
  const aes_word k0 = last_key[0], k1 = last_key[1], k2 = last_key[2], k3 = last_key[3];

  const unsigned char* src = in + start;
  unsigned char* dst = out + start;
  const bool aligned =
      ((reinterpret_cast<unsigned long long>(src) | reinterpret_cast<unsigned long long>(dst)) & 15) == 0;
  if (aligned && 16 * (first + 31ull * stride + 1) <= length) {
    // All 32 blocks whole and aligned (every unit of an aligned message but the last): 16-byte
    // loads and stores at constant offsets from one address, no per-block checks.
    if (stride == 32)
      aes_ctr_xor_blocks<32>(src + 16 * first, dst + 16 * first, s, k0, k1, k2, k3);
    else
      aes_ctr_xor_blocks<1>(src + 16 * first, dst + 16 * first, s, k0, k1, k2, k3);
    return;
  }
  const unsigned long long phase = reinterpret_cast<unsigned long long>(src) & 15;
  if (!Masked && stride == 1 && ((reinterpret_cast<unsigned long long>(dst) & 15) == phase)) {
    // Batch units at any alignment (and the last, partial unit of an aligned message).
    const unsigned long long at = 16 * first, n = length - at < 512 ? length - at : 512;
    const unsigned int k[4] = {k0, k1, k2, k3};
    aes_ctr_xor_chunks(src + at - phase, dst + at - phase, n, static_cast<unsigned int>(phase), s, k);
    return;
  }
#pragma unroll
  for (int k = 0; k < 32; ++k) {
    const unsigned long long d = first + static_cast<unsigned long long>(stride) * k;
    if (d >= blocks) continue;
    const unsigned long long at = 16 * d;
    const aes_word w0 = s[k] ^ k0, w1 = s[32 + k] ^ k1, w2 = s[64 + k] ^ k2, w3 = s[96 + k] ^ k3;
    if (aligned && at + 16 <= length) {
      const uint4 x = *reinterpret_cast<const uint4*>(src + at);
      *reinterpret_cast<uint4*>(dst + at) = make_uint4(x.x ^ w0, x.y ^ w1, x.z ^ w2, x.w ^ w3);
    } else {
      // Unaligned buffers or the last, partial block: byte by byte.
      const unsigned long long lo = (static_cast<unsigned long long>(w1) << 32) | w0;
      const unsigned long long hi = (static_cast<unsigned long long>(w3) << 32) | w2;
      const unsigned int n = length - at < 16 ? static_cast<unsigned int>(length - at) : 16u;
      for (unsigned int i = 0; i < n; ++i) {
        const unsigned long long ks = i < 8 ? lo >> (8 * i) : hi >> (8 * (i - 8));
        dst[at + i] = static_cast<unsigned char>(src[at + i] ^ ks);
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(128)
    aes_ctr(const AesState* states, const unsigned char* in, unsigned char* out, const unsigned long long* offsets,
            unsigned long long fixed_bytes, unsigned long long count, unsigned long long units_per_message,
            const unsigned long long* unit_starts, unsigned long long total_units, unsigned int stride,
            const unsigned char* verdicts) {
  aes_ctr_body<false>(states, in, out, offsets, fixed_bytes, count, units_per_message, unit_starts, total_units, stride,
                      verdicts, nullptr);
}

extern "C" __global__ void __launch_bounds__(128)
    aes_ctr_masked(const AesState* states, const unsigned char* in, unsigned char* out,
                   const unsigned long long* offsets, unsigned long long fixed_bytes, unsigned long long count,
                   unsigned long long units_per_message, const unsigned long long* unit_starts,
                   unsigned long long total_units, unsigned int stride, const unsigned char* verdicts,
                   const aes_word* masks) {
  aes_ctr_body<true>(states, in, out, offsets, fixed_bytes, count, units_per_message, unit_starts, total_units, stride,
                     verdicts, masks);
}

// Batch CTR (aes_ctr's stride 1) with its IO staged through shared memory (aes_batch_stage.cuh):
// each warp's byte range is fetched while the keystream is computed, and loaded and stored by
// consecutive lanes on consecutive chunks. Launch: AES_BATCH_THREADS threads per block and
// AES_BATCH_STAGE_BYTES of dynamic shared memory. verdicts (GCM open): messages whose verdict is
// 0 are not written. Every thread reaches every barrier: threads past total_units, of empty units
// or of failed messages take part in the IO without a keystream.
extern "C" __global__ void __launch_bounds__(AES_BATCH_THREADS)
    aes_ctr_batch(const AesState* states, const unsigned char* in, unsigned char* out,
                  const unsigned long long* offsets, unsigned long long fixed_bytes, unsigned long long count,
                  unsigned long long units_per_message, const unsigned long long* unit_starts,
                  unsigned long long total_units, const unsigned char* verdicts) {
  extern __shared__ uint4 aes_stage_slots[];
  const unsigned long long u = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  // The lane's bytes [begin, begin + n) of in and out: its unit's 512 or fewer.
  AesLaneFacts facts = {0, 0, false};
  unsigned long long m = 0, v = 0;
  if (u < total_units) {
    unsigned long long start, length;
    aes_unit_of(u, count, units_per_message, unit_starts, m, v);
    aes_message_span(offsets, fixed_bytes, m, start, length);
    const unsigned long long at = 512 * v < length ? 512 * v : length;
    facts.begin = start + at;
    facts.n = static_cast<unsigned int>(length - at < 512 ? length - at : 512);
    facts.failed = verdicts != nullptr && verdicts[m] == 0;
  }
  const AesWarp warp = AesWarp::of(facts);
  // The warp's range: from its first lane's bytes to the end of its last lane with a unit.
  const unsigned long long warp_first = u - warp.lane;
  const unsigned int last = warp_first + 31 < total_units ? 31u
                            : warp_first < total_units    ? static_cast<unsigned int>(total_units - 1 - warp_first)
                                                          : 0u;
  const AesStage stage = aes_stage_of(aes_stage_slots + (threadIdx.x >> 5) * AES_WARP_SLOTS, in, out, warp.begin_of(0),
                                      warp.begin_of(last) + warp.n_of(last));
  aes_stage_fetch(stage, warp);
  const bool keyed = facts.n > 0 && !facts.failed;
  aes_word s[128];
  unsigned int last_key[4] = {0, 0, 0, 0};
  if (keyed) {
    const AesState& st = states[m];
    aes_ctr_keystream<false>(st, nullptr, 32 * v, 1, s);
#pragma unroll
    for (int q = 0; q < 4; ++q) last_key[q] = st.round_keys[4 * st.rounds + q];
  }
  aes_copy_async_wait();
  warp.sync();
  if (keyed) aes_stage_xor(stage, warp.lane, aes_stage_at(stage, facts.begin), facts.n, s, last_key);
  warp.sync();
  aes_stage_store(stage, warp);
}

// GHASH block i of message m's stream AAD || 0-pad || C || 0-pad || [8 len(A)]_64 [8 len(C)]_64.
__device__ __forceinline__ AesGf128 aes_ghash_block(const unsigned char* aad, unsigned long long aad_len,
                                                    const unsigned char* data, unsigned long long data_len,
                                                    unsigned long long i) {
  const unsigned long long aad_blocks = (aad_len + 15) / 16, data_blocks = (data_len + 15) / 16;
  unsigned int w[4];
  if (i < aad_blocks) {
    aes_load_block(aad + 16 * i, aad_len - 16 * i, w);
  } else if (i < aad_blocks + data_blocks) {
    const unsigned long long at = 16 * (i - aad_blocks);
    aes_load_block(data + at, data_len - at, w);
  } else {
    const unsigned long long a = 8 * aad_len, c = 8 * data_len;
    w[0] = aes_bswap32(static_cast<unsigned int>(a >> 32));
    w[1] = aes_bswap32(static_cast<unsigned int>(a));
    w[2] = aes_bswap32(static_cast<unsigned int>(c >> 32));
    w[3] = aes_bswap32(static_cast<unsigned int>(c));
  }
  return aes_gf128_from_words(w);
}

// A chunk's sum times H^(chunk_blocks * chunks_after), from the powers H^(chunk_blocks * 2^s).
__device__ __forceinline__ AesGf128 aes_ghash_place_chunk(AesGf128 acc, unsigned long long chunks_after,
                                                          const AesGf128* powers) {
  for (int bit = 0; bit < AES_GHASH_POWERS; ++bit)
    if ((chunks_after >> bit) & 1) acc = aes_gf128_mul(acc, powers[bit]);
  return acc;
}

// GHASH = sum of X_i H^(n - i + 1). The stream's n blocks are placed at the end of
// chunks_per_message * chunk_blocks positions (zero blocks in front change nothing); thread j of
// a message runs Horner over chunk j and multiplies the result by H^(chunk_blocks (chunks - 1 - j))
// from the powers table (aes_setup's, AES_GHASH_POWERS per message); the products are XORed into
// the message's accumulator. With one chunk per message (batch) the chunk is the whole stream.
// Stream blocks skip_begin .. skip_end - 1 are left out (aes_ghash_mma takes them): a chunk inside
// them adds nothing, and a chunk's run of them is one multiplication by H^run (Horner over zero
// blocks), not a block at a time.
extern "C" __global__ void __launch_bounds__(128)
    aes_ghash(AesState* states, const unsigned char* aad, const unsigned long long* aad_offsets,
              unsigned long long aad_fixed, const unsigned char* data, const unsigned long long* offsets,
              unsigned long long fixed_bytes, unsigned long long count, unsigned long long chunks_per_message,
              unsigned long long chunk_blocks, const AesGf128* powers, unsigned long long skip_begin,
              unsigned long long skip_end) {
  const unsigned long long u = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned long long m = u / chunks_per_message, j = u % chunks_per_message;
  AesGf128 acc = {0, 0};
  if (m < count) {
    unsigned long long aad_start, aad_len, start, length;
    aes_message_span(aad_offsets, aad_fixed, m, aad_start, aad_len);
    aes_message_span(offsets, fixed_bytes, m, start, length);
    const unsigned long long n = (aad_len + 15) / 16 + (length + 15) / 16 + 1;
    unsigned long long begin = 0, end = n;
    if (chunks_per_message > 1) {
      const long long pad = static_cast<long long>(chunks_per_message * chunk_blocks) - static_cast<long long>(n);
      const long long b = static_cast<long long>(j * chunk_blocks) - pad;
      begin = b < 0 ? 0 : static_cast<unsigned long long>(b);
      end = static_cast<unsigned long long>(b + static_cast<long long>(chunk_blocks));
    }
    if (begin >= skip_begin && end <= skip_end) end = begin;  // all of it aes_ghash_mma's: nothing to add
    const AesGf128 h = states[m].h;
    // Data blocks of a message that is not 16-byte aligned: from the buffer's aligned chunks
    // around it (cipher_io.cuh), block d at offset mis of chunk d || chunk d + 1, each chunk
    // loaded once (16-byte loads; the first and last chunk byte by byte, within the message).
    const unsigned char* message = data + start;
    const unsigned int mis = static_cast<unsigned int>(reinterpret_cast<unsigned long long>(message) & 15);
    const unsigned long long aad_blocks = (aad_len + 15) / 16, data_blocks = (length + 15) / 16;
    unsigned int chunk[4];  // chunk d of the data once a data block has been hashed (mis != 0)
    bool have_chunk = false;
    for (unsigned long long i = begin; i < end; ++i) {
      if (i >= skip_begin && i < skip_end) {
        const unsigned long long to = end < skip_end ? end : skip_end;
        if (i > begin) acc = aes_gf128_mul(acc, aes_gf128_pow(h, to - i));  // before any block: zero
        i = to - 1;
        continue;
      }
      AesGf128 x;
      if (mis != 0 && i >= aad_blocks && i - aad_blocks < data_blocks) {
        const unsigned long long d = i - aad_blocks;
        if (!have_chunk) cipher_load_range_chunk(message - mis, d, length, mis, chunk);
        have_chunk = true;
        unsigned int next[4], w[4];
        cipher_load_range_chunk(message - mis, d + 1, length, mis, next);
        cipher_extract16(chunk, next, mis, w);
#pragma unroll
        for (int q = 0; q < 4; ++q) chunk[q] = next[q];
        x = aes_gf128_from_words(w);
      } else {
        x = aes_ghash_block(aad + aad_start, aad_len, data + start, length, i);
      }
      acc.lo ^= x.lo;
      acc.hi ^= x.hi;
      acc = aes_gf128_mul(acc, h);
    }
    if (chunks_per_message == 1) {
      states[m].ghash = acc;
      return;
    }
    acc = aes_ghash_place_chunk(acc, chunks_per_message - 1 - j, powers + m * AES_GHASH_POWERS);
  }
  if (chunks_per_message == 1) return;
#ifdef __CUDA_ARCH__
  // Bulk (one message): XOR across the warp first, so that one atomic per warp remains.
  for (int lane_mask = 16; lane_mask >= 1; lane_mask >>= 1) {
    acc.lo ^= __shfl_xor_sync(0xffffffffu, acc.lo, lane_mask);
    acc.hi ^= __shfl_xor_sync(0xffffffffu, acc.hi, lane_mask);
  }
  if ((threadIdx.x & 31) != 0) return;
  const unsigned long long target = (static_cast<unsigned long long>(blockIdx.x) * blockDim.x) / chunks_per_message;
#else
  const unsigned long long target = m;
#endif
  if (target < count) {
    atomicXor(&states[target].ghash.lo, acc.lo);
    atomicXor(&states[target].ghash.hi, acc.hi);
  }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// Bulk GCM on the tensor cores: the matrix of the powers of H (products X * H^e of basis vectors,
// then the MMA's B fragments) and the row weights, from the message's H (states[0].h). Both are
// key material, in the call's scratch (wiped with it). Launch: AES_MMA_PRODUCTS threads, then
// AES_MMA_FRAGMENT_PAIRS threads.
extern "C" __global__ void __launch_bounds__(256)
    aes_ghash_mma_products(const AesState* states, AesGf128* products, AesGf128* row_powers) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const AesGf128 h = states[0].h;
  if (j < AES_MMA_PRODUCTS) products[j] = aes_mma_product(h, j);
  if (j < AES_MMA_ROWS) row_powers[j] = aes_gf128_pow(h, AES_MMA_ROW_BLOCKS * (AES_MMA_ROWS - 1 - j));
}

extern "C" __global__ void __launch_bounds__(256) aes_ghash_mma_fragments(const AesGf128* products, uint2* fragments) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= AES_MMA_FRAGMENT_PAIRS) return;
  const int lane = j & 31, n = (j >> 5) % AES_MMA_NTILES, s = (j >> 5) / AES_MMA_NTILES;
  fragments[j] =
      make_uint2(aes_mma_fragment_word(products, s, n, lane, 0), aes_mma_fragment_word(products, s, n, lane, 1));
}

// Chunks first_chunk .. first_chunk + chunks - 1 of the one message's GHASH stream (aes_ghash's
// chunking, chunk_blocks = AES_MMA_CHUNK_BLOCKS, chunks_per_message in all): their blocks among
// the `whole` data blocks at data (16-byte aligned), the others zero; data block 0 is at stream
// position data_position (the AAD's blocks and the padding in front). Warp w of W
// takes chunks w, w + W, ... and adds their sums by Horner's rule with H^(AES_MMA_CHUNK_BLOCKS W)
// (one multiplication a chunk; placing each chunk from the powers table took ~8), then places the
// total by its last chunk as aes_ghash places a chunk: one atomic XOR a warp into the
// accumulator. Launch: 512 threads a block, AES_MMA_FRAGMENT_PAIRS * 8 bytes of dynamic shared
// memory (the fragments, loaded once a block).
extern "C" __global__ void __launch_bounds__(512, 1)
    aes_ghash_mma(AesState* states, const uint4* data, unsigned long long whole, unsigned long long data_position,
                  unsigned long long first_chunk, unsigned long long chunks, unsigned long long chunks_per_message,
                  const uint2* fragments_global, const AesGf128* row_powers, const AesGf128* powers) {
  extern __shared__ uint2 aes_mma_fragments[];
  for (unsigned int i = threadIdx.x; i < AES_MMA_FRAGMENT_PAIRS; i += blockDim.x)
    aes_mma_fragments[i] = fragments_global[i];
  __syncthreads();
  const unsigned long long warps = static_cast<unsigned long long>(gridDim.x) * (blockDim.x / 32);
  const unsigned long long first = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (first >= chunks) return;
  const AesGf128 stride_power = aes_ghash_place_chunk(AesGf128{1, 0}, warps, powers);
  AesGf128 acc = {0, 0};
  unsigned long long last = first;
  for (unsigned long long c = first; c < chunks; c += warps) {
    // acc * H^(AES_MMA_CHUNK_BLOCKS W) + this chunk (the first product is of zero: one loop body).
    const long long first_block =
        static_cast<long long>((first_chunk + c) * AES_MMA_CHUNK_BLOCKS) - static_cast<long long>(data_position);
    const AesGf128 sum = aes_mma_chunk(data, first_block, whole, aes_mma_fragments, row_powers);
    acc = aes_gf128_mul(acc, stride_power);
    acc.lo ^= sum.lo;
    acc.hi ^= sum.hi;
    last = c;
  }
  acc = aes_ghash_place_chunk(acc, chunks_per_message - 1 - (first_chunk + last), powers);
  if ((threadIdx.x & 31) == 0) {
    atomicXor(&states[0].ghash.lo, acc.lo);
    atomicXor(&states[0].ghash.hi, acc.hi);
  }
}
#endif

// Tag = E_K(J0) ^ GHASH, its first tag_bytes bytes written to tags_out, or compared (without an
// early exit) with tags_expected, the verdict (1: match) in verdicts[m]; a mismatch adds 1 to
// *failures where given (so that the host fetches the verdicts only when one failed).
extern "C" __global__ void aes_gcm_tag(const AesState* states, unsigned long long count, unsigned int tag_bytes,
                                       unsigned char* tags_out, const unsigned char* tags_expected,
                                       unsigned char* verdicts, unsigned long long* failures) {
  const unsigned long long m = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= count) return;
  unsigned int t[4];
  aes_gf128_to_words(states[m].ghash, t);
  for (int i = 0; i < 4; ++i) t[i] ^= states[m].tag_mask[i];
  const unsigned long long lo = (static_cast<unsigned long long>(t[1]) << 32) | t[0];
  const unsigned long long hi = (static_cast<unsigned long long>(t[3]) << 32) | t[2];
  unsigned int diff = 0;
  for (unsigned int i = 0; i < tag_bytes; ++i) {
    const unsigned char byte = static_cast<unsigned char>(i < 8 ? lo >> (8 * i) : hi >> (8 * (i - 8)));
    if (tags_out != nullptr) tags_out[m * tag_bytes + i] = byte;
    if (tags_expected != nullptr) diff |= byte ^ tags_expected[m * tag_bytes + i];
  }
  if (verdicts != nullptr) verdicts[m] = diff == 0 ? 1 : 0;
  if (failures != nullptr && diff != 0) atomicAdd(failures, 1ull);  // the verdict is public
}
