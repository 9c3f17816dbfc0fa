// AES-CTR and AES-GCM kernels, constant-time (bitsliced AES, multiply-with-holes GHASH):
//   aes_setup            one thread per message: key schedule, GCM's H, J0, E_K(J0), powers of H;
//   aes_ctr              32 blocks per thread: counter blocks built bitsliced, encrypted, XORed with data;
//   aes_ghash            GHASH over AAD || C || lengths, in chunks of blocks combined with powers of H;
//   aes_gcm_bulk_lengths bulk GCM: the AAD's GHASH (aes_ghash over the AAD alone) moved to its place
//                        in front of C, and the lengths block added;
//   aes_gcm_bulk         bulk GCM: CTR and the ciphertext's GHASH in one pass (aes_gcm_bulk.cuh);
//   aes_gcm_tag          one thread per message: tag = E_K(J0) ^ GHASH, written or compared.
// Positions, lengths and verdicts are public and may steer branches; keys, data and H never do.
#include "aes_ctr.cuh"
#include "aes_gcm_bulk.cuh"
#include "aes_gf128.cuh"
#include "aes_key.cuh"
#include "aes_state.cuh"

#define AES_MODE_CTR 0u
#define AES_MODE_GCM 1u

// mode AES_MODE_CTR: ivs holds 16-byte counter blocks. AES_MODE_GCM: ivs holds iv_bytes-byte IVs,
// and ghash_chunk_blocks > 0 asks for the powers of bulk GCM: H^(chunk_blocks * 2^s) and the lane
// powers H^(33 - t) (aes_gcm_bulk takes chunk_blocks = 32); masks, if not null, receives each
// message's round keys as masks (AES_MASK_WORDS words per message).
extern "C" __global__ void aes_setup(AesState* states, const unsigned char* keys, unsigned int key_bytes,
                                     const unsigned char* ivs, unsigned int iv_bytes, unsigned int mode,
                                     unsigned long long count, unsigned long long ghash_chunk_blocks, aes_word* masks) {
  const unsigned long long m = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= count) return;
  AesState& st = states[m];
  const int rounds = aes_expand_key(keys + m * key_bytes, key_bytes, st.round_keys);
  st.rounds = static_cast<unsigned int>(rounds);
  if (masks != nullptr) {
    const AesKeyBits bits{st.round_keys};
    for (int r = 0; r <= rounds; ++r)
      for (int j = 0; j < 128; ++j) masks[m * AES_MASK_WORDS + 128 * r + j] = bits.mask(r, j);
  }
  const unsigned char* iv = ivs + m * iv_bytes;
  if (mode == AES_MODE_CTR) {
    st.counter_bits = 128;
    for (int i = 0; i < 4; ++i) st.counter[i] = aes_load_be32(iv + 4 * i);
    return;
  }
  st.counter_bits = 32;
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
  st.ghash.lo = st.ghash.hi = 0;
  if (ghash_chunk_blocks > 0) {
    // H^chunk_blocks by square-and-multiply on the public exponent, then repeated squares.
    AesGf128 p = {1, 0}, base = h;
    for (unsigned long long e = ghash_chunk_blocks; e != 0; e >>= 1) {
      if (e & 1) p = aes_gf128_mul(p, base);
      base = aes_gf128_mul(base, base);
    }
    for (int s = 0; s < AES_GHASH_POWERS; ++s) {
      st.h_powers[s] = p;
      p = aes_gf128_mul(p, p);
    }
    p = h;
    for (int t = 31; t >= 0; --t) {
      p = aes_gf128_mul(p, h);
      st.lane_powers[t] = p;  // H^(33 - t)
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

// GHASH's last block, [8 len(A)]_64 [8 len(C)]_64.
__device__ __forceinline__ AesGf128 aes_gcm_lengths_block(unsigned long long aad_len, unsigned long long data_len) {
  const unsigned long long a = 8 * aad_len, c = 8 * data_len;
  const unsigned int w[4] = {aes_bswap32(static_cast<unsigned int>(a >> 32)), aes_bswap32(static_cast<unsigned int>(a)),
                             aes_bswap32(static_cast<unsigned int>(c >> 32)),
                             aes_bswap32(static_cast<unsigned int>(c))};
  return aes_gf128_from_words(w);
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
    return aes_gcm_lengths_block(aad_len, data_len);
  }
  return aes_gf128_from_words(w);
}

// GHASH = sum of X_i H^(n - i + 1). The stream's n blocks are placed at the end of
// chunks_per_message * chunk_blocks positions (zero blocks in front change nothing); thread j of
// a message runs Horner over chunk j and multiplies the result by H^(chunk_blocks (chunks - 1 - j))
// from the powers table; the products are XORed into the message's accumulator. With one chunk
// per message (batch) the chunk is the whole stream.
extern "C" __global__ void __launch_bounds__(128)
    aes_ghash(AesState* states, const unsigned char* aad, const unsigned long long* aad_offsets,
              unsigned long long aad_fixed, const unsigned char* data, const unsigned long long* offsets,
              unsigned long long fixed_bytes, unsigned long long count, unsigned long long chunks_per_message,
              unsigned long long chunk_blocks) {
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
    const AesGf128 h = states[m].h;
    for (unsigned long long i = begin; i < end; ++i) {
      const AesGf128 x = aes_ghash_block(aad + aad_start, aad_len, data + start, length, i);
      acc.lo ^= x.lo;
      acc.hi ^= x.hi;
      acc = aes_gf128_mul(acc, h);
    }
    if (chunks_per_message == 1) {
      states[m].ghash = acc;
      return;
    }
    const unsigned long long e = chunks_per_message - 1 - j;
    for (int bit = 0; bit < AES_GHASH_POWERS; ++bit)
      if ((e >> bit) & 1) acc = aes_gf128_mul(acc, states[m].h_powers[bit]);
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

// Bulk GCM (one message, c = ceil(data_bytes / 16) blocks), before aes_gcm_bulk: the accumulator
// holds aes_ghash's GHASH of AAD || [8 len(A)]_64 [0]_64 (or 0 without AAD), Y ^ L0 H with
// Y = sum of A_i H^(a + 1 - i). Moved in front of C's c blocks and closed by the real lengths
// block L, it becomes (Y ^ L0 H ^ L0 H) H^c ^ L H; aes_gcm_bulk then adds C's part. The exponent c
// is public: H^c = H^(32 q) (h_powers, chunks of 32) times H^r (lane_powers[33 - r], or H).
extern "C" __global__ void aes_gcm_bulk_lengths(AesState* states, unsigned long long aad_bytes,
                                                unsigned long long data_bytes) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  AesState& st = states[0];
  const AesGf128 h = st.h, l0 = aes_gf128_mul(aes_gcm_lengths_block(aad_bytes, 0), h);
  AesGf128 y = st.ghash;
  y.lo ^= l0.lo;
  y.hi ^= l0.hi;
  const unsigned long long c = (data_bytes + 15) / 16, q = c / 32, r = c % 32;
  for (int s = 0; (q >> s) != 0; ++s)
    if ((q >> s) & 1) y = aes_gf128_mul(y, st.h_powers[s]);
  if (r != 0) y = aes_gf128_mul(y, r == 1 ? h : st.lane_powers[33 - r]);
  const AesGf128 l = aes_gf128_mul(aes_gcm_lengths_block(aad_bytes, data_bytes), h);
  st.ghash.lo = y.lo ^ l.lo;
  st.ghash.hi = y.hi ^ l.hi;
}

// Bulk GCM, one message of `length` bytes: CTR and GHASH of the ciphertext in one pass, after
// aes_gcm_bulk_lengths. Warp w covers the groups w * groups_per_warp .. (+ groups_per_warp - 1) of
// aes_gcm_bulk.cuh's layout, lane t of group g the blocks 1024 g + t + 32 k - pad, as aes_ctr's
// stride 32 but shifted by the pad; the lane's Horner sum runs on across its groups. Encrypting,
// a thread hashes the ciphertext it has just written; decrypting (decrypt != 0), the ciphertext
// before it overwrites it (in place), so out holds plaintext before the tag is checked: the host
// zeroes it when the tag does not match.
extern "C" __global__ void __launch_bounds__(128)
    aes_gcm_bulk(AesState* states, const unsigned char* in, unsigned char* out, unsigned long long length,
                 unsigned long long groups_per_warp, unsigned int decrypt, const aes_word* masks) {
  const unsigned long long u = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned long long blocks = (length + 15) / 16;
  const unsigned long long groups = (blocks + AES_GCM_GROUP_BLOCKS - 1) / AES_GCM_GROUP_BLOCKS;
  const unsigned long long pad = AES_GCM_GROUP_BLOCKS * groups - blocks;
  const unsigned int lane = static_cast<unsigned int>(u % 32);
  const unsigned long long g0 = (u / 32) * groups_per_warp;
  if (g0 >= groups) return;  // a whole warp
  const unsigned long long g1 = g0 + groups_per_warp < groups ? g0 + groups_per_warp : groups;
  AesState* st = states;
  const AesGf128 h32 = st->lane_powers[1];  // H^32
  AesGf128 acc = {0, 0};
  for (unsigned long long g = g0; g < g1; ++g) {
    // Block numbers modulo 2^64: the pad's blocks are "below zero" and skipped.
    const unsigned long long first = AES_GCM_GROUP_BLOCKS * g + lane - pad;
    if (decrypt != 0) acc = aes_ghash_unit(acc, g > g0, h32, in, length, first);
    aes_word s[128];
    aes_ctr_keystream<true>(*st, masks, first, 32, s);
    aes_ctr_xor_unit(*st, s, in, out, length, first, 32);
    if (decrypt == 0) acc = aes_ghash_unit(acc, g > g0, h32, out, length, first);
  }
  aes_ghash_unit_add(st, acc, lane, groups - g1);
}

// Tag = E_K(J0) ^ GHASH, its first tag_bytes bytes written to tags_out, or compared (without an
// early exit) with tags_expected, the verdict (1: match) in verdicts[m].
extern "C" __global__ void aes_gcm_tag(const AesState* states, unsigned long long count, unsigned int tag_bytes,
                                       unsigned char* tags_out, const unsigned char* tags_expected,
                                       unsigned char* verdicts) {
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
}
