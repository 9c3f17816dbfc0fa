// Batch ChaCha20 / ChaCha20-Poly1305: one thread per message, each with its own key, nonce and
// counter (keys, ivs), AAD and tag. Message i is in[offsets[i], offsets[i + 1]), or
// in[i * message_bytes, ...) when offsets is null; the output has the same layout.
//
// Compile-time parameters (-D):
//   AEAD      1: ChaCha20-Poly1305 (counter 1 for the data, block 0 for the one-time key, tag to
//             tags[16 i]); 0 (default): ChaCha20 from params[i].counter
//   ALIGNED   1: every message starts 16-byte aligned in in and out; 0 (default): any alignment,
//             16-byte loads and stores of the aligned chunks around each message when in and out
//             are in the same phase (cipher_io.cuh), byte loads and stores otherwise
//   DECRYPT   AEAD only: 1 MACs the input, 0 (default) the output
#include "cipher_io.cuh"
#include "poly1305.cuh"

#ifndef AEAD
#define AEAD 0
#endif
#ifndef ALIGNED
#define ALIGNED 0
#endif
#ifndef DECRYPT
#define DECRYPT 0
#endif

// XORs the n-byte message at in/out with the keystream from `counter`; with AEAD also runs
// Poly1305 over the ciphertext (h, r). VECTOR: in and out are 16-byte aligned (16-byte loads and
// stores), else byte by byte.
template <bool VECTOR>
CIPHER_FN void chacha20_message(const unsigned char* in, unsigned char* out, unsigned long long n,
                                const unsigned int key[8], unsigned int counter, const unsigned int nonce[3],
                                poly1305_elem* h, const poly1305_mul_by& r) {
  unsigned int ks[16];
  for (unsigned long long at = 0; at < n; at += 64u) {
    chacha20_block(ks, key, counter + (unsigned int)(at / 64u), nonce);
    if (at + 64u <= n) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const cipher_vec4 x = cipher_load16<VECTOR>(in + at + 16 * j);
        const cipher_vec4 y = cipher_xor(x, ks + 4 * j);
        cipher_store16<VECTOR>(out + at + 16 * j, y);
        if (AEAD) *h = poly1305_step(*h, DECRYPT ? x : y, r);
      }
    } else {
      for (int j = 0; j < 4 && at + 16u * j < n; ++j) {
        const unsigned long long p = at + 16u * j;
        const unsigned int left = n - p >= 16u ? 16u : (unsigned int)(n - p);
        const cipher_vec4 x = cipher_load_partial(in + p, left);
        const cipher_vec4 y = cipher_keep_bytes(cipher_xor(x, ks + 4 * j), left);
        cipher_store_partial(out + p, y, left);
        if (AEAD) *h = poly1305_step(*h, DECRYPT ? x : y, r);
      }
    }
  }
}

CIPHER_FN cipher_vec4 chacha20_vec(const unsigned int* w) {
  cipher_vec4 v;
  v.x = w[0], v.y = w[1], v.z = w[2], v.w = w[3];
  return v;
}

// The same for a message at any alignment mis = in % 16 = out % 16 (cipher_io.cuh): the buffer's
// aligned 16-byte chunks around it move with 16-byte loads and stores, only the first and the last
// byte by byte. Keystream part t (bytes 16 t .. 16 t + 15) is K_t; chunk c of the buffer holds
// message bytes [16 c - mis, 16 c - mis + 16), i.e. the bytes at offset 16 - mis of part c - 1 ||
// part c. ChaCha20: out chunk c = in chunk c ^ those keystream bytes. AEAD: message block t (offset
// mis of in chunks t || t + 1) ^ K_t is ciphertext block t, which Poly1305 takes in message order;
// out chunk c is then the bytes at offset 16 - mis of ciphertext blocks c - 1 || c. Each 64-byte
// keystream block's input chunks are loaded before its rounds, which then hide the loads' latency.
CIPHER_FN void chacha20_message_chunks(const unsigned char* in, unsigned char* out, unsigned long long n,
                                       unsigned int mis, const unsigned int key[8], unsigned int counter,
                                       const unsigned int nonce[3], poly1305_elem* h, const poly1305_mul_by& r) {
  const unsigned char* in_base = in - mis;
  unsigned char* out_base = out - mis;
  const unsigned int o = 16u - mis;
  const unsigned long long parts = (n + 15u) / 16u;
  unsigned int prev[4] = {0, 0, 0, 0};   // keystream (ChaCha20) or ciphertext (AEAD) part t - 1
  unsigned int chunk[4] = {0, 0, 0, 0};  // AEAD: in chunk t
  if (AEAD) cipher_load_range_chunk(in_base, 0, n, mis, chunk);
  unsigned int ks[16];
  for (unsigned long long t0 = 0; t0 < parts; t0 += 4u) {
    // The input chunks this keystream block needs: c = t0 .. t0 + 3 (AEAD: one ahead).
    unsigned int x[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j) cipher_load_range_chunk(in_base, t0 + j + (AEAD ? 1u : 0u), n, mis, x[j]);
    chacha20_block(ks, key, counter + (unsigned int)(t0 / 4u), nonce);
    const unsigned int here = parts - t0 >= 4u ? 4u : (unsigned int)(parts - t0);  // parts in this block
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned long long t = t0 + j;
      if ((unsigned int)j >= here) continue;
      unsigned int cur[4], y[4];
      if (AEAD) {
        unsigned int m[4];
        cipher_extract16(chunk, x[j], mis, m);  // message block t, zero past n
#pragma unroll
        for (int q = 0; q < 4; ++q) cur[q] = m[q] ^ ks[4 * j + q];
        const unsigned int left = n - 16u * t >= 16u ? 16u : (unsigned int)(n - 16u * t);
        *h = poly1305_step(*h, DECRYPT ? chacha20_vec(m) : cipher_keep_bytes(chacha20_vec(cur), left), r);
#pragma unroll
        for (int q = 0; q < 4; ++q) chunk[q] = x[j][q];
        cipher_extract16(prev, cur, o, y);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) cur[q] = ks[4 * j + q];
        cipher_extract16(prev, cur, o, y);
#pragma unroll
        for (int q = 0; q < 4; ++q) y[q] ^= x[j][q];
      }
      int from, to;
      if (cipher_chunk_bounds(t, n, mis, from, to))
        cipher_store_chunk(out_base + 16u * t, y);
      else
        cipher_store_part(out_base + 16u * t, from, to, y);
#pragma unroll
      for (int q = 0; q < 4; ++q) prev[q] = cur[q];
    }
  }
  // The last chunk, `parts`, holds the message's last mis bytes when 16 parts - mis < n.
  int from, to;
  (void)cipher_chunk_bounds(parts, n, mis, from, to);
  if (from < to) {
    const unsigned int zero[4] = {0, 0, 0, 0};
    unsigned int y[4], last[4];
    cipher_extract16(prev, zero, o, y);
    if (!AEAD) {
      cipher_load_part(in_base + 16u * parts, from, to, last);
#pragma unroll
      for (int q = 0; q < 4; ++q) y[q] ^= last[q];
    }
    cipher_store_part(out_base + 16u * parts, from, to, y);
  }
}

// Message i's bytes: 16-byte accesses when in and out are in the same phase (ALIGNED: at offset 0
// of 16), byte by byte otherwise.
CIPHER_FN void chacha20_message_any(const unsigned char* in, unsigned char* out, unsigned long long n,
                                    const unsigned int key[8], unsigned int counter, const unsigned int nonce[3],
                                    poly1305_elem* h, const poly1305_mul_by& r) {
#if ALIGNED
  chacha20_message<true>(in, out, n, key, counter, nonce, h, r);
#else
  const unsigned long long a = reinterpret_cast<unsigned long long>(in), b = reinterpret_cast<unsigned long long>(out);
  if (((a ^ b) & 15u) == 0)
    chacha20_message_chunks(in, out, n, (unsigned int)(a & 15u), key, counter, nonce, h, r);
  else
    chacha20_message<false>(in, out, n, key, counter, nonce, h, r);
#endif
}

// Word w of the 4-byte aligned bytes at p (keys and IVs: 32 and 12 or 16 bytes a message from an
// aligned buffer), little-endian as the CPU backend's hosts and the GPU store them.
CIPHER_FN unsigned int chacha20_word(const unsigned char* p, int w) {
  return reinterpret_cast<const unsigned int*>(p)[w];
}

// keys: 32 bytes per message; ivs: iv_bytes (16: the counter word || nonce, as OpenSSL takes a
// chacha20 IV; 12: the nonce, the counter then `counter`) per message, read as the caller gave
// them (no parameter table built on the host).
__global__ void chacha20_batch(const unsigned char* in, unsigned char* out, unsigned long long count,
                               unsigned long long message_bytes, const unsigned long long* offsets,
                               const unsigned char* keys, const unsigned char* aad,
                               const unsigned long long* aad_offsets, unsigned char* tags, const unsigned char* ivs,
                               unsigned int iv_bytes, unsigned int counter) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const unsigned long long begin = offsets ? offsets[i] : i * message_bytes;
  const unsigned long long n = offsets ? offsets[i + 1] - begin : message_bytes;
  unsigned int key[8], nonce[3];
#pragma unroll
  for (int w = 0; w < 8; ++w) key[w] = chacha20_word(keys + 32u * i, w);
  const unsigned char* iv = ivs + iv_bytes * i;
  const unsigned char* nonce_bytes = iv_bytes == 16u ? iv + 4 : iv;
#pragma unroll
  for (int w = 0; w < 3; ++w) nonce[w] = chacha20_word(nonce_bytes, w);
  poly1305_elem h = poly1305_zero();
#if AEAD
  (void)counter;
  unsigned int ks[16];
  chacha20_block(ks, key, 0u, nonce);
  const poly1305_mul_by r = poly1305_multiplier(poly1305_clamped_r(ks));
  unsigned long long aad_bytes = 0;
  if (aad_offsets) {
    const unsigned char* a = aad + aad_offsets[i];
    aad_bytes = aad_offsets[i + 1] - aad_offsets[i];
    for (unsigned long long at = 0; at < aad_bytes; at += 16u) {
      const unsigned int left = aad_bytes - at >= 16u ? 16u : (unsigned int)(aad_bytes - at);
      h = poly1305_step(h, cipher_load_partial(a + at, left), r);
    }
  }
  chacha20_message_any(in + begin, out + begin, n, key, 1u, nonce, &h, r);
  cipher_vec4 lengths;
  lengths.x = (unsigned int)aad_bytes, lengths.y = (unsigned int)(aad_bytes >> 32);
  lengths.z = (unsigned int)n, lengths.w = (unsigned int)(n >> 32);
  h = poly1305_step(h, lengths, r);
  cipher_store_partial(tags + 16u * i, poly1305_finish(h, ks + 4), 16u);
#else
  (void)aad, (void)aad_offsets, (void)tags;
  const poly1305_mul_by unused = {};
  chacha20_message_any(in + begin, out + begin, n, key, iv_bytes == 16u ? chacha20_word(iv, 0) : counter, nonce, &h,
                       unused);
#endif
}
