// AES key expansion and single-block encryption on the device, constant-time: the S-box is the
// bitsliced circuit (the four bytes of a word in four lanes), never a table.
#pragma once

#include "aes_bitslice.cuh"

// SubWord: the S-box on each byte of w. The circuit is bitwise, so it runs on the four bytes in
// place: plane b holds bit b of every byte at bits 0, 8, 16, 24 (the gates also set other bits, which
// the last mask drops): about 130 ALU operations, where gathering the bits into four adjacent lanes
// took about 370.
__device__ __forceinline__ unsigned int aes_sub_word(unsigned int w) {
  aes_word planes[8];
#pragma unroll
  for (int b = 0; b < 8; ++b) planes[b] = (w >> b) & 0x01010101u;
  aes_sbox(planes);
  unsigned int r = 0;
#pragma unroll
  for (int b = 0; b < 8; ++b) r |= (planes[b] & 0x01010101u) << b;
  return r;
}

// FIPS 197 5.2 for a key of NK words: 4 * (NK + 7) round-key words (little-endian words of the key
// bytes) into w. Unrolled for its key size, so that w and rcon live in registers: a loop over a
// runtime size keeps the words in memory and waits on a load of the word before at every step, which
// made aes_setup's one thread a message ~8x slower than its instruction count.
template <int NK>
__device__ __forceinline__ void aes_expand_key_words(const unsigned char* key, unsigned int* w) {
  constexpr int words = 4 * (NK + 7);
#pragma unroll
  for (int i = 0; i < NK; ++i)
    w[i] =
        key[4 * i] | (key[4 * i + 1] << 8) | (key[4 * i + 2] << 16) | (static_cast<unsigned int>(key[4 * i + 3]) << 24);
  unsigned int rcon = 1;
#pragma unroll
  for (int i = NK; i < words; ++i) {
    unsigned int t = w[i - 1];
    if (i % NK == 0) {
      t = aes_sub_word((t >> 8) | (t << 24)) ^ rcon;  // RotWord, SubWord, Rcon (positions are public)
      rcon = (rcon << 1) ^ ((rcon >> 7) * 0x11bu);
    } else if (NK > 6 && i % NK == 4) {
      t = aes_sub_word(t);
    }
    w[i] = w[i - NK] ^ t;
  }
}

// Words w[0, N) to dst (8-byte aligned, as AesState::round_keys is) in pairs: a thread's 8-byte
// stores write half as many sectors as 4-byte ones, and a one-thread-a-message setup kernel
// writes little else.
template <int N>
__device__ __forceinline__ void aes_store_word_pairs(unsigned int* dst, const unsigned int* w) {
  unsigned long long* pairs = reinterpret_cast<unsigned long long*>(dst);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) pairs[i] = w[2 * i] | static_cast<unsigned long long>(w[2 * i + 1]) << 32;
}

// The round keys of a key of key_bytes 16, 24 or 32 bytes, expanded in registers and stored to
// round_keys (4 * (rounds + 1) words, 8-byte aligned). Returns the number of rounds.
__device__ __forceinline__ int aes_expand_key(const unsigned char* key, unsigned int key_bytes,
                                              unsigned int* round_keys) {
  unsigned int w[60];
  if (key_bytes == 16) {
    aes_expand_key_words<4>(key, w);
    aes_store_word_pairs<44>(round_keys, w);
    return 10;
  }
  if (key_bytes == 24) {
    aes_expand_key_words<6>(key, w);
    aes_store_word_pairs<52>(round_keys, w);
    return 12;
  }
  aes_expand_key_words<8>(key, w);
  aes_store_word_pairs<60>(round_keys, w);
  return 14;
}

// One block (little-endian words) through the cipher, in lane 0 of a bitsliced state.
__device__ __forceinline__ void aes_encrypt_block(const unsigned int* round_keys, int rounds, const unsigned int* in,
                                                  unsigned int* out) {
  aes_word s[128];
#pragma unroll
  for (int j = 0; j < 128; ++j) s[j] = ((in[j >> 5] ^ round_keys[j >> 5]) >> (j & 31)) & 1u;
  aes_encrypt_rounds(s, AesKeyBits{round_keys}, rounds);
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    unsigned int v = 0;
#pragma unroll
    for (int i = 0; i < 32; ++i) v |= (s[32 * g + i] & 1u) << i;
    out[g] = v;
  }
}
