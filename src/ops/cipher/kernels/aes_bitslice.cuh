// Bitsliced AES encryption of 32 blocks at once, constant-time: no table lookups and no branch on
// data. The state is 128 words; word 8 * i + b holds bit b (LSB = 0) of state byte i of all 32
// blocks (block k in bit k). SubBytes is the Boyar-Peralta S-box circuit (113 gates), ShiftRows
// is renaming, MixColumns is XORs, and round keys arrive as 0 / ~0 masks.
#pragma once

typedef unsigned int aes_word;

// Bit i of w as a 0 / ~0 mask, on the FMA pipe only: a multiply by 2^(31 - i) moves the bit to the
// sign (IMAD.SHL) and the signed high half of (that * 1) repeats the sign over the word (IMAD.HI).
// ptxas would spend two ALU operations on the shifts (a shift left and an arithmetic shift right),
// and the ALU pipe is what bounds bitsliced AES; multiplies take the same time whatever the bits.
__device__ __forceinline__ aes_word aes_bit_mask(unsigned int w, int i) {
  return static_cast<aes_word>(__mulhi(static_cast<int>(w * (1u << (31 - i))), 1));
}

// Where round keys come from, as 0 / ~0 masks (uniform across the 32 blocks): mask(r, j) is bit j
// (0..127) of round key r. AesKeyBits derives it from the key bytes (aes_bit_mask: no ALU
// operation); AesKeyMasks loads it precomputed (128 words per round, at addresses that depend on r
// and j only).
struct AesKeyBits {
  const unsigned int* round_keys;  // 4 little-endian words per round
  __device__ __forceinline__ aes_word mask(int r, int j) const {
    return aes_bit_mask(round_keys[4 * r + (j >> 5)], j & 31);
  }
};
struct AesKeyMasks {
  const aes_word* masks;  // 128 words per round
  __device__ __forceinline__ aes_word mask(int r, int j) const { return masks[128 * r + j]; }
};

// The AES S-box on 8 bitsliced words x[0..7] (x[b] = bit b), in place (Boyar and Peralta,
// "A depth-16 circuit for the AES S-box", 2011: 32 AND, 81 XOR/XNOR).
__device__ __forceinline__ void aes_sbox(aes_word* x) {
  const aes_word u0 = x[7], u1 = x[6], u2 = x[5], u3 = x[4], u4 = x[3], u5 = x[2], u6 = x[1], u7 = x[0];
  // Top linear layer.
  const aes_word y14 = u3 ^ u5, y13 = u0 ^ u6, y9 = u0 ^ u3, y8 = u0 ^ u5, t0 = u1 ^ u2;
  const aes_word y1 = t0 ^ u7, y4 = y1 ^ u3, y12 = y13 ^ y14, y2 = y1 ^ u0, y5 = y1 ^ u6;
  const aes_word y3 = y5 ^ y8, t1 = u4 ^ y12, y15 = t1 ^ u5, y20 = t1 ^ u1, y6 = y15 ^ u7;
  const aes_word y10 = y15 ^ t0, y11 = y20 ^ y9, y7 = u7 ^ y11, y17 = y10 ^ y11, y19 = y10 ^ y8;
  const aes_word y16 = t0 ^ y11, y21 = y13 ^ y16, y18 = u0 ^ y16;
  // Nonlinear middle: inversion in GF(2^4)^2.
  const aes_word t2 = y12 & y15, t3 = y3 & y6, t4 = t3 ^ t2, t5 = y4 & u7, t6 = t5 ^ t2;
  const aes_word t7 = y13 & y16, t8 = y5 & y1, t9 = t8 ^ t7, t10 = y2 & y7, t11 = t10 ^ t7;
  const aes_word t12 = y9 & y11, t13 = y14 & y17, t14 = t13 ^ t12, t15 = y8 & y10, t16 = t15 ^ t12;
  const aes_word t17 = t4 ^ t14, t18 = t6 ^ t16, t19 = t9 ^ t14, t20 = t11 ^ t16;
  const aes_word t21 = t17 ^ y20, t22 = t18 ^ y19, t23 = t19 ^ y21, t24 = t20 ^ y18;
  const aes_word t25 = t21 ^ t22, t26 = t21 & t23, t27 = t24 ^ t26, t28 = t25 & t27, t29 = t28 ^ t22;
  const aes_word t30 = t23 ^ t24, t31 = t22 ^ t26, t32 = t31 & t30, t33 = t32 ^ t24, t34 = t23 ^ t33;
  const aes_word t35 = t27 ^ t33, t36 = t24 & t35, t37 = t36 ^ t34, t38 = t27 ^ t36, t39 = t29 & t38;
  const aes_word t40 = t25 ^ t39, t41 = t40 ^ t37, t42 = t29 ^ t33, t43 = t29 ^ t40, t44 = t33 ^ t37;
  const aes_word t45 = t42 ^ t41;
  const aes_word z0 = t44 & y15, z1 = t37 & y6, z2 = t33 & u7, z3 = t43 & y16, z4 = t40 & y1;
  const aes_word z5 = t29 & y7, z6 = t42 & y11, z7 = t45 & y17, z8 = t41 & y10, z9 = t44 & y12;
  const aes_word z10 = t37 & y3, z11 = t33 & y4, z12 = t43 & y13, z13 = t40 & y5, z14 = t29 & y2;
  const aes_word z15 = t42 & y9, z16 = t45 & y14, z17 = t41 & y8;
  // Bottom linear layer (with the affine constant folded into the XNORs).
  const aes_word t46 = z15 ^ z16, t47 = z10 ^ z11, t48 = z5 ^ z13, t49 = z9 ^ z10, t50 = z2 ^ z12;
  const aes_word t51 = z2 ^ z5, t52 = z7 ^ z8, t53 = z0 ^ z3, t54 = z6 ^ z7, t55 = z16 ^ z17;
  const aes_word t56 = z12 ^ t48, t57 = t50 ^ t53, t58 = z4 ^ t46, t59 = z3 ^ t54, t60 = t46 ^ t57;
  const aes_word t61 = z14 ^ t57, t62 = t52 ^ t58, t63 = t49 ^ t58, t64 = z4 ^ t59, t65 = t61 ^ t62;
  const aes_word t66 = z1 ^ t63, t67 = t64 ^ t65;
  const aes_word s3 = t53 ^ t66;
  x[7] = t59 ^ t63;
  x[6] = ~(t64 ^ s3);
  x[5] = ~(t55 ^ t67);
  x[4] = s3;
  x[3] = t51 ^ t66;
  x[2] = t47 ^ t65;
  x[1] = ~(t56 ^ t62);
  x[0] = ~(t48 ^ t60);
}

__device__ __forceinline__ void aes_sub_bytes(aes_word* s) {
#pragma unroll
  for (int i = 0; i < 16; ++i) aes_sbox(s + 8 * i);
}

// Byte (row r, column c) of the state is byte r + 4 c; ShiftRows moves byte (r, c + r) to (r, c).
__device__ __forceinline__ int aes_shifted_byte(int r, int c) {
  return r + 4 * ((c + r) & 3);
}

// ShiftRows, MixColumns and AddRoundKey of middle round r. With a_0..a_3 a column after
// ShiftRows and t_i = a_i + a_{i+1}, output byte i is 2 a_i + 3 a_{i+1} + a_{i+2} + a_{i+3}
// = xtime(t_i) + a_{i+1} + t_{i+2}: each output bit is two 3-input XORs (LOP3) with the key bit.
template <class Keys>
__device__ __forceinline__ void aes_shift_mix_add(aes_word* s, const Keys& keys, int round) {
  aes_word out[128];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    aes_word t[4][8];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int b = 0; b < 8; ++b)
        t[i][b] = s[8 * aes_shifted_byte(i, c) + b] ^ s[8 * aes_shifted_byte((i + 1) & 3, c) + b];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const aes_word* a1 = s + 8 * aes_shifted_byte((i + 1) & 3, c);
      const aes_word* t0 = t[i];
      const aes_word* t2 = t[(i + 2) & 3];
      // xtime: multiply by x modulo x^8 + x^4 + x^3 + x + 1.
      const aes_word x2[8] = {t0[7], t0[0] ^ t0[7], t0[1], t0[2] ^ t0[7], t0[3] ^ t0[7], t0[4], t0[5], t0[6]};
      const int o = 8 * (i + 4 * c);
#pragma unroll
      for (int b = 0; b < 8; ++b) out[o + b] = x2[b] ^ a1[b] ^ t2[b] ^ keys.mask(round, o + b);
    }
  }
#pragma unroll
  for (int j = 0; j < 128; ++j) s[j] = out[j];
}

// ShiftRows and (LastKey) AddRoundKey of the last round (no MixColumns).
template <bool LastKey, class Keys>
__device__ __forceinline__ void aes_shift_add(aes_word* s, const Keys& keys, int round) {
  aes_word out[128];
#pragma unroll
  for (int c = 0; c < 4; ++c)
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int b = 0; b < 8; ++b) out[8 * (r + 4 * c) + b] = s[8 * aes_shifted_byte(r, c) + b];
#pragma unroll
  for (int j = 0; j < 128; ++j) s[j] = LastKey ? out[j] ^ keys.mask(round, j) : out[j];
}

// Encrypts the 32 bitsliced blocks in s with `rounds` rounds (10, 12, 14). The first AddRoundKey
// (round key 0) is the caller's: it may be folded into building s. LastKey false leaves out the
// last AddRoundKey too: the caller XORs the last round key's words into the blocks after the
// transpose (the key is the same in all 32 blocks), where it joins the XOR with the data in one
// 3-input LOP3 (128 instructions fewer per 32 blocks).
template <bool LastKey = true, class Keys>
__device__ __forceinline__ void aes_encrypt_rounds(aes_word* s, const Keys& keys, int rounds) {
#pragma unroll 1
  for (int r = 1; r < rounds; ++r) {
    aes_sub_bytes(s);
    aes_shift_mix_add(s, keys, r);
  }
  aes_sub_bytes(s);
  aes_shift_add<LastKey>(s, keys, rounds);
}

// The select masks of the transpose's shifts by n = 1, 2, 4 (index n), read from constant memory:
// with literal masks ptxas splits each bit select into two LOP3s (one per complementary mask).
__constant__ unsigned int aes_transpose_low_mask[5] = {0u, 0x55555555u, 0x33333333u, 0u, 0x0f0f0f0fu};
__constant__ unsigned int aes_transpose_high_mask[5] = {0u, 0xaaaaaaaau, 0xccccccccu, 0u, 0xf0f0f0f0u};

// Transposes the 32x32 bit matrix a (a[j] bit k -> a[k] bit j). Applied to words 32 g .. 32 g + 31
// of a state it turns bit planes into blocks: a[k] becomes little-endian word g of block k.
__device__ __forceinline__ void aes_transpose32(aes_word* a) {
  // Shifts 16 and 8 move whole bytes: one PRMT per output word.
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const aes_word x = a[j], y = a[j + 16];
    a[j] = __byte_perm(x, y, 0x5410);
    a[j + 16] = __byte_perm(x, y, 0x7632);
  }
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    if (j & 8) continue;
    const aes_word x = a[j], y = a[j + 8];
    a[j] = __byte_perm(x, y, 0x6240);
    a[j + 8] = __byte_perm(x, y, 0x7351);
  }
  // Shifts 4, 2, 1 as two bit selects (one LOP3 each) per pair of words, plus the two shifted
  // copies (ptxas puts the left shift on the FMA pipe as IMAD.SHL): 3 ALU instructions per pair
  // instead of 4. (The right shift as IMAD.HI would leave 2, but measurements on the H200 showed
  // ALU work moved to IMAD.HI saving nothing: docs/performance.md.)
#pragma unroll
  for (int shift = 4; shift >= 1; shift >>= 1) {
    const aes_word low = aes_transpose_low_mask[shift], high = aes_transpose_high_mask[shift];
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      if (j & shift) continue;
      const aes_word x = a[j], y = a[j + shift];
      a[j] = x ^ ((x ^ (y << shift)) & high);         // x's low bits, y's low bits moved up
      a[j + shift] = y ^ ((y ^ (x >> shift)) & low);  // y's high bits, x's high bits moved down
    }
  }
}

__device__ __forceinline__ void aes_transpose_state(aes_word* s) {
#pragma unroll
  for (int g = 0; g < 4; ++g) aes_transpose32(s + 32 * g);
}
