// GF(2^128) arithmetic for GHASH, constant-time: carry-less products come from integer
// multiplications of operands with 3-bit holes between their bits (so carries never reach a bit
// that is kept), never from tables or data-dependent branches.
//
// An AesGf128 holds the coefficient of x^i in bit i (lo: x^0..x^63). GCM's block order puts x^0
// in the most significant bit of byte 0, so loading a block reverses the bits of every byte.
#pragma once

#include "aes_state.cuh"

// Low 64 bits of the carry-less product x * y.
__device__ __forceinline__ unsigned long long aes_clmul_lo(unsigned long long x, unsigned long long y) {
  const unsigned long long m0 = 0x1111111111111111ull, m1 = m0 << 1, m2 = m0 << 2, m3 = m0 << 3;
  const unsigned long long x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
  const unsigned long long y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
  // Within one product a kept bit sums at most 15 terms below bit 60, so its carries stay in the
  // three hole bits above it; 16 terms occur only from bit 60 on, carrying past bit 63.
  const unsigned long long z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
  const unsigned long long z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
  const unsigned long long z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
  const unsigned long long z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);
  return (z0 & m0) | (z1 & m1) | (z2 & m2) | (z3 & m3);
}

// The full 128-bit carry-less product x * y as (lo, hi): the high half is the low half of the
// product of the bit-reversed operands, reversed back.
__device__ __forceinline__ void aes_clmul(unsigned long long x, unsigned long long y, unsigned long long& lo,
                                          unsigned long long& hi) {
  lo = aes_clmul_lo(x, y);
  hi = __brevll(aes_clmul_lo(__brevll(x), __brevll(y))) >> 1;
}

// a * b modulo x^128 + x^7 + x^2 + x + 1 (Karatsuba: three 64x64 carry-less products).
__device__ __forceinline__ AesGf128 aes_gf128_mul(AesGf128 a, AesGf128 b) {
  unsigned long long l0, l1, h0, h1, m0, m1;
  aes_clmul(a.lo, b.lo, l0, l1);
  aes_clmul(a.hi, b.hi, h0, h1);
  aes_clmul(a.lo ^ a.hi, b.lo ^ b.hi, m0, m1);
  m0 ^= l0 ^ h0;
  m1 ^= l1 ^ h1;
  unsigned long long p0 = l0, p1 = l1 ^ m0, p2 = h0 ^ m1;
  const unsigned long long p3 = h1;
  // x^128 = x^7 + x^2 + x + 1: fold p3 (x^192..) into p2:p1, then p2 (x^128..) into p1:p0.
  p1 ^= p3 ^ (p3 << 1) ^ (p3 << 2) ^ (p3 << 7);
  p2 ^= (p3 >> 63) ^ (p3 >> 62) ^ (p3 >> 57);
  p0 ^= p2 ^ (p2 << 1) ^ (p2 << 2) ^ (p2 << 7);
  p1 ^= (p2 >> 63) ^ (p2 >> 62) ^ (p2 >> 57);
  AesGf128 r;
  r.lo = p0;
  r.hi = p1;
  return r;
}

// h^e for e >= 0 by square-and-multiply on the public exponent.
__device__ __forceinline__ AesGf128 aes_gf128_pow(AesGf128 h, unsigned long long e) {
  AesGf128 p = {1, 0};
  for (; e != 0; e >>= 1) {
    if (e & 1) p = aes_gf128_mul(p, h);
    h = aes_gf128_mul(h, h);
  }
  return p;
}

// Reverses the bit order inside each byte of a little-endian 64-bit load of block bytes, giving
// the coefficients of x^0..x^63 of those 8 bytes.
__device__ __forceinline__ unsigned long long aes_gf128_half(unsigned int w0, unsigned int w1) {
  const unsigned long long swapped =
      (static_cast<unsigned long long>(__byte_perm(w0, 0, 0x0123)) << 32) | __byte_perm(w1, 0, 0x0123);
  return __brevll(swapped);
}

// Block bytes as little-endian words w[0..3] -> field element.
__device__ __forceinline__ AesGf128 aes_gf128_from_words(const unsigned int* w) {
  AesGf128 r;
  r.lo = aes_gf128_half(w[0], w[1]);
  r.hi = aes_gf128_half(w[2], w[3]);
  return r;
}

// Field element -> block bytes as little-endian words (the inverse of aes_gf128_from_words).
__device__ __forceinline__ void aes_gf128_to_words(AesGf128 a, unsigned int* w) {
  const unsigned long long lo = __brevll(a.lo), hi = __brevll(a.hi);
  w[0] = __byte_perm(static_cast<unsigned int>(lo >> 32), 0, 0x0123);
  w[1] = __byte_perm(static_cast<unsigned int>(lo), 0, 0x0123);
  w[2] = __byte_perm(static_cast<unsigned int>(hi >> 32), 0, 0x0123);
  w[3] = __byte_perm(static_cast<unsigned int>(hi), 0, 0x0123);
}
