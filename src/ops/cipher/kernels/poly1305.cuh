// Poly1305 arithmetic (RFC 8439 section 2.5) for parallel evaluation: elements of GF(2^130 - 5) in
// five 26-bit limbs, multiplied with 32x32->64-bit multiply-adds (IMAD.WIDE on the GPU's FMA
// pipe). Constant time: no branch or address depends on a limb value; every reduction is a fixed
// carry chain and the final one a masked select.
//
// Evaluation is split with Poly(A || B) = Poly(A) * r^|B| + Poly(B), where Poly(m_1..m_k) =
// sum m_i r^(k - i + 1) (Horner: h = (h + m) * r per block). Leading zero blocks do not change a
// Poly value, which is how uneven splits are aligned to the right. The multipliers r^|B| are
// powers r^(2^e) from a table that the setup kernel computes once per key.
#ifndef OPKIT_POLY1305_CUH
#define OPKIT_POLY1305_CUH

#include "chacha20.cuh"

#define POLY1305_MASK 0x3ffffffu

// An element, limbs below 2^31 ("partially reduced": results of poly1305_reduce are below 2^26 but
// for limb 1's 2^14 more; sums of a few such, as Horner steps and combining trees build them, stay
// below 2^31, which poly1305_mul accepts as its first operand).
struct poly1305_elem {
  unsigned int l[5];
};

// A multiplier with its limbs 1..4 times 5 precomputed (2^130 = 5 mod p).
struct poly1305_mul_by {
  unsigned int r[5];
  unsigned int r5[5];
};

CIPHER_FN poly1305_elem poly1305_zero() {
  poly1305_elem z;
#pragma unroll
  for (int i = 0; i < 5; ++i) z.l[i] = 0;
  return z;
}

CIPHER_FN poly1305_mul_by poly1305_multiplier(const poly1305_elem& r) {
  poly1305_mul_by m;
#pragma unroll
  for (int i = 0; i < 5; ++i) {
    m.r[i] = r.l[i];
    m.r5[i] = r.l[i] * 5u;
  }
  return m;
}

// A 16-byte block (four little-endian words) plus 2^128 (the appended 0x01 byte of a full block).
CIPHER_FN poly1305_elem poly1305_block(const cipher_vec4& w) {
  poly1305_elem m;
  m.l[0] = w.x & POLY1305_MASK;
  m.l[1] = ((w.x >> 26) | (w.y << 6)) & POLY1305_MASK;
  m.l[2] = ((w.y >> 20) | (w.z << 12)) & POLY1305_MASK;
  m.l[3] = ((w.z >> 14) | (w.w << 18)) & POLY1305_MASK;
  m.l[4] = (w.w >> 8) | (1u << 24);
  return m;
}

CIPHER_FN poly1305_elem poly1305_add(const poly1305_elem& a, const poly1305_elem& b) {
  poly1305_elem s;
#pragma unroll
  for (int i = 0; i < 5; ++i) s.l[i] = a.l[i] + b.l[i];
  return s;
}

// The five 64-bit column sums of products a * m before their carries: several products may be
// summed here and reduced once (poly1305_reduce), which is how a piece of blocks, each times its
// own power of r, costs one carry chain instead of one per block.
struct poly1305_columns {
  unsigned long long d[5];
};

CIPHER_FN poly1305_columns poly1305_columns_zero() {
  poly1305_columns c;
#pragma unroll
  for (int i = 0; i < 5; ++i) c.d[i] = 0;
  return c;
}

// c += a * m (schoolbook, with 2^130 = 5 folded in through m.r5). m's limbs are below 2^26 + 2^14
// (poly1305_reduce's results), m.r5's below 2^28.4, so a column gains less than 5 * 2^(A + 28.4)
// for a's limbs below 2^A: 2^56.7 for a message block (A = 26), so that dozens of products fit
// before a reduction, and 2^61.7 for the largest sums the combining trees build (A = 31).
CIPHER_FN void poly1305_mul_add(poly1305_columns& c, const poly1305_elem& a, const poly1305_mul_by& m) {
  typedef unsigned long long u64;
  const unsigned int *r = m.r, *s = m.r5, *h = a.l;
  c.d[0] += (u64)h[0] * r[0] + (u64)h[1] * s[4] + (u64)h[2] * s[3] + (u64)h[3] * s[2] + (u64)h[4] * s[1];
  c.d[1] += (u64)h[0] * r[1] + (u64)h[1] * r[0] + (u64)h[2] * s[4] + (u64)h[3] * s[3] + (u64)h[4] * s[2];
  c.d[2] += (u64)h[0] * r[2] + (u64)h[1] * r[1] + (u64)h[2] * r[0] + (u64)h[3] * s[4] + (u64)h[4] * s[3];
  c.d[3] += (u64)h[0] * r[3] + (u64)h[1] * r[2] + (u64)h[2] * r[1] + (u64)h[3] * r[0] + (u64)h[4] * s[4];
  c.d[4] += (u64)h[0] * r[4] + (u64)h[1] * r[3] + (u64)h[2] * r[2] + (u64)h[3] * r[1] + (u64)h[4] * r[0];
}

// Column sums below 2^63 to an element mod p, partially reduced: limbs below 2^26, but limb 1
// below 2^26 + 2^14.
CIPHER_FN poly1305_elem poly1305_reduce(poly1305_columns c) {
  c.d[1] += c.d[0] >> 26;
  c.d[2] += c.d[1] >> 26;
  c.d[3] += c.d[2] >> 26;
  c.d[4] += c.d[3] >> 26;
  const unsigned long long h0 = (c.d[0] & POLY1305_MASK) + (c.d[4] >> 26) * 5u;
  poly1305_elem out;
  out.l[0] = (unsigned int)(h0 & POLY1305_MASK);
  out.l[1] = (unsigned int)(c.d[1] & POLY1305_MASK) + (unsigned int)(h0 >> 26);
  out.l[2] = (unsigned int)(c.d[2] & POLY1305_MASK);
  out.l[3] = (unsigned int)(c.d[3] & POLY1305_MASK);
  out.l[4] = (unsigned int)(c.d[4] & POLY1305_MASK);
  return out;
}

// a * m mod p, partially reduced (a's limbs below 2^31, m's as for poly1305_mul_add).
CIPHER_FN poly1305_elem poly1305_mul(const poly1305_elem& a, const poly1305_mul_by& m) {
  poly1305_columns c = poly1305_columns_zero();
  poly1305_mul_add(c, a, m);
  return poly1305_reduce(c);
}

// (h + m) * r: one Horner step over a full 16-byte block.
CIPHER_FN poly1305_elem poly1305_step(const poly1305_elem& h, const cipher_vec4& block, const poly1305_mul_by& r) {
  return poly1305_mul(poly1305_add(h, poly1305_block(block)), r);
}

// The power table: table[e] = r^(2^e) for e in [0, POLY1305_POWERS).
#define POLY1305_POWERS 40

// r^k for a public k < 2^POLY1305_POWERS (lengths are public; only k's bits steer the loop).
CIPHER_FN poly1305_elem poly1305_pow(const poly1305_elem* table, unsigned long long k) {
  poly1305_elem acc = poly1305_zero();
  acc.l[0] = 1;
  for (int e = 0; e < POLY1305_POWERS; ++e)
    if ((k >> e) & 1u) acc = poly1305_mul(acc, poly1305_multiplier(table[e]));
  return acc;
}

// r and s from the first 32 bytes of the one-time key (RFC 8439 2.5: r clamped).
CIPHER_FN poly1305_elem poly1305_clamped_r(const unsigned int k[4]) {
  cipher_vec4 w;
  w.x = k[0] & 0x0fffffffu, w.y = k[1] & 0x0ffffffcu, w.z = k[2] & 0x0ffffffcu, w.w = k[3] & 0x0ffffffcu;
  poly1305_elem r = poly1305_block(w);
  r.l[4] &= ~(1u << 24);  // poly1305_block adds 2^128; r has no such bit
  return r;
}

// The tag: h fully reduced mod p, plus s, mod 2^128, as four little-endian words.
CIPHER_FN cipher_vec4 poly1305_finish(const poly1305_elem& hin, const unsigned int s[4]) {
  unsigned int h0 = hin.l[0], h1 = hin.l[1], h2 = hin.l[2], h3 = hin.l[3], h4 = hin.l[4], c;
  c = h1 >> 26, h1 &= POLY1305_MASK, h2 += c;
  c = h2 >> 26, h2 &= POLY1305_MASK, h3 += c;
  c = h3 >> 26, h3 &= POLY1305_MASK, h4 += c;
  c = h4 >> 26, h4 &= POLY1305_MASK, h0 += c * 5u;
  c = h0 >> 26, h0 &= POLY1305_MASK, h1 += c;
  // g = h + 5 - 2^130; use g when it does not go negative (h >= p), by mask, not by branch.
  unsigned int g0 = h0 + 5u;
  c = g0 >> 26, g0 &= POLY1305_MASK;
  unsigned int g1 = h1 + c;
  c = g1 >> 26, g1 &= POLY1305_MASK;
  unsigned int g2 = h2 + c;
  c = g2 >> 26, g2 &= POLY1305_MASK;
  unsigned int g3 = h3 + c;
  c = g3 >> 26, g3 &= POLY1305_MASK;
  unsigned int g4 = h4 + c - (1u << 26);
  unsigned int use_g = (g4 >> 31) - 1u;  // all ones when g4 did not borrow
  h0 = (h0 & ~use_g) | (g0 & use_g);
  h1 = (h1 & ~use_g) | (g1 & use_g);
  h2 = (h2 & ~use_g) | (g2 & use_g);
  h3 = (h3 & ~use_g) | (g3 & use_g);
  h4 = (h4 & ~use_g) | (g4 & use_g);
  const unsigned int w0 = h0 | (h1 << 26), w1 = (h1 >> 6) | (h2 << 20), w2 = (h2 >> 12) | (h3 << 14),
                     w3 = (h3 >> 18) | (h4 << 8);
  unsigned long long f = (unsigned long long)w0 + s[0];
  cipher_vec4 tag;
  tag.x = (unsigned int)f;
  f = (unsigned long long)w1 + s[1] + (f >> 32);
  tag.y = (unsigned int)f;
  f = (unsigned long long)w2 + s[2] + (f >> 32);
  tag.z = (unsigned int)f;
  f = (unsigned long long)w3 + s[3] + (f >> 32);
  tag.w = (unsigned int)f;
  return tag;
}

#endif
