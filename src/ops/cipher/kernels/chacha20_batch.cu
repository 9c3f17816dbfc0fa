// Batch ChaCha20 / ChaCha20-Poly1305: one thread per message, each with its own key, nonce and
// counter (params[i]), AAD and tag. Message i is in[offsets[i], offsets[i + 1]), or
// in[i * message_bytes, ...) when offsets is null; the output has the same layout.
//
// Compile-time parameters (-D):
//   AEAD      1: ChaCha20-Poly1305 (counter 1 for the data, block 0 for the one-time key, tag to
//             tags[16 i]); 0 (default): ChaCha20 from params[i].counter
//   ALIGNED   1: every message starts 16-byte aligned in in and out; 0 (default): byte loads
//   DECRYPT   AEAD only: 1 MACs the input, 0 (default) the output
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
// Poly1305 over the ciphertext (h, r).
CIPHER_FN void chacha20_message(const unsigned char* in, unsigned char* out, unsigned long long n,
                                const unsigned int key[8], unsigned int counter, const unsigned int nonce[3],
                                poly1305_elem* h, const poly1305_mul_by& r) {
  unsigned int ks[16];
  for (unsigned long long at = 0; at < n; at += 64u) {
    chacha20_block(ks, key, counter + (unsigned int)(at / 64u), nonce);
    if (at + 64u <= n) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const cipher_vec4 x = cipher_load16<ALIGNED != 0>(in + at + 16 * j);
        const cipher_vec4 y = cipher_xor(x, ks + 4 * j);
        cipher_store16<ALIGNED != 0>(out + at + 16 * j, y);
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

__global__ void chacha20_batch(const unsigned char* in, unsigned char* out, unsigned long long count,
                               unsigned long long message_bytes, const unsigned long long* offsets,
                               const chacha20_params* params, const unsigned char* aad,
                               const unsigned long long* aad_offsets, unsigned char* tags) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const unsigned long long begin = offsets ? offsets[i] : i * message_bytes;
  const unsigned long long n = offsets ? offsets[i + 1] - begin : message_bytes;
  unsigned int key[8], nonce[3];
#pragma unroll
  for (int w = 0; w < 8; ++w) key[w] = params[i].key[w];
#pragma unroll
  for (int w = 0; w < 3; ++w) nonce[w] = params[i].nonce[w];
  poly1305_elem h = poly1305_zero();
#if AEAD
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
  chacha20_message(in + begin, out + begin, n, key, 1u, nonce, &h, r);
  cipher_vec4 lengths;
  lengths.x = (unsigned int)aad_bytes, lengths.y = (unsigned int)(aad_bytes >> 32);
  lengths.z = (unsigned int)n, lengths.w = (unsigned int)(n >> 32);
  h = poly1305_step(h, lengths, r);
  cipher_store_partial(tags + 16u * i, poly1305_finish(h, ks + 4), 16u);
#else
  const poly1305_mul_by unused = {};
  chacha20_message(in + begin, out + begin, n, key, params[i].counter, nonce, &h, unused);
#endif
}
