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

// FIPS 197 5.2: key_bytes 16, 24 or 32 -> 4 * (rounds + 1) round-key words (little-endian words
// of the key bytes). Returns the number of rounds.
__device__ __forceinline__ int aes_expand_key(const unsigned char* key, unsigned int key_bytes, unsigned int* w) {
  const int nk = static_cast<int>(key_bytes / 4);
  const int rounds = nk + 6;
  for (int i = 0; i < nk; ++i)
    w[i] =
        key[4 * i] | (key[4 * i + 1] << 8) | (key[4 * i + 2] << 16) | (static_cast<unsigned int>(key[4 * i + 3]) << 24);
  unsigned int rcon = 1;
  for (int i = nk; i < 4 * (rounds + 1); ++i) {
    unsigned int t = w[i - 1];
    if (i % nk == 0) {
      t = aes_sub_word((t >> 8) | (t << 24)) ^ rcon;  // RotWord, SubWord, Rcon (positions are public)
      rcon = (rcon << 1) ^ ((rcon >> 7) * 0x11bu);
    } else if (nk > 6 && i % nk == 4) {
      t = aes_sub_word(t);
    }
    w[i] = w[i - nk] ^ t;
  }
  return rounds;
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
