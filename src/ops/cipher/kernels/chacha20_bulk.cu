// Bulk ChaCha20 and ChaCha20-Poly1305 over one message split across the whole device.
//
// chacha20_xor: two whole 64-byte keystream blocks per thread (block counter = first counter +
// index), 16-byte loads and stores; chacha20_xor_tail: the last partial block.
// chacha20_poly1305_*: each thread of the main kernel en/decrypts one 256-byte piece and
// evaluates Poly1305 over its 16 ciphertext blocks; pieces are combined in a shared-memory tree
// per thread block (Poly(A || B) = Poly(A) * r^|B| + Poly(B)), the block results by the finish
// kernel, which also takes the last (possibly short) piece, the AAD and the length block, and
// writes the tag. Pieces are aligned to the right (leading empty pieces), so every combined part
// has a power-of-two length and its multiplier is a table entry r^(2^e).
//
// Compile-time parameters (-D):
//   ALIGNED   1: in and out are 16-byte aligned (vector loads); 0 (default): byte loads
//   BLOCK     threads per block of the Poly1305 kernels, a power of two (default 256)
//   DECRYPT   1: the input is the ciphertext that Poly1305 reads; 0 (default): the output is
#include "poly1305.cuh"

#ifndef ALIGNED
#define ALIGNED 0
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef DECRYPT
#define DECRYPT 0
#endif
// How chacha20_xor orders one thread's two blocks (opkit_cipher_bench --chacha20-schedules 0,1 times
// both; H200, 1 GiB: 1000 GB/s for 0, 1570 GB/s for 1):
//   1 (default): both blocks' input loaded first, then the keystreams, XORs and stores, so that the
//      loads' latency is spent in the rounds (Nsight Compute on 0: half of each warp's cycles
//      stalled on the loads, issue slots 52% busy);
//   0: keystream 1, XOR block 1, keystream 2, XOR block 2.
// (Both keystreams in one interleaved pass, eight independent quarter rounds per step, was
// measured on top of 1 and deleted: no faster.)
#ifndef CHACHA20_SCHEDULE
#define CHACHA20_SCHEDULE 1
#endif

// How chacha20_poly1305_main evaluates Poly1305 over one thread's piece of 16 blocks m_1..m_16,
// Poly = sum m_i r^(17 - i) (opkit_cipher_bench --poly1305-chains 1,16 times both; H200, 1 GiB
// encrypt / decrypt: 812 / 714 GB/s for 1, 862 / 874 for 16):
//   16 (default): every block times its own power r^(17 - i) (a table in shared memory), the 16
//      products summed in 64-bit columns and reduced once: no step waits for another, and one
//      carry chain per piece instead of sixteen;
//   1: one Horner chain, h = (h + m) r, each step waiting for the last.
// Also measured and dropped: two Horner chains with r^2 (815 / 732); the loop over the piece's
// four ChaCha20 blocks unrolled (801 / 821 for 16: four times the code, and "no instruction" was
// the top stall in Nsight Compute); __launch_bounds__ asking for 5 blocks per SM (390 / 424 for
// 16, registers capped to fit); each block's input loaded one block earlier (slower in three of
// four cases: more registers, less occupancy).
#ifndef POLY1305_CHAINS
#define POLY1305_CHAINS 16
#endif

// The double rounds a loop iteration of chacha20_poly1305_main's ChaCha20 (chacha20_rounds_rest's
// Unroll). Its piece loop, one block and four Poly1305 products, is 1,125 SASS instructions fully
// unrolled (~18 KB; "no instruction" was the top stall in Nsight Compute) and 96 registers; as a
// loop of one double round it is 415 + 9 x 99 instructions, 69 registers, three blocks an SM
// instead of two. Measured on an H100 (2026-12-07 night, bench/results/2026-12-07-night-decoder-lanes.md,
// 1 GiB, opkit_cipher_bench --aead-variants): 1: 784.7 / 750.5 GB/s encrypt / decrypt+verify,
// 3: 781.5 / 745.1, 9: 624.0–635.2 / 663.4–672.1.
#ifndef CHACHA20_AEAD_ROUNDS_UNROLL
#define CHACHA20_AEAD_ROUNDS_UNROLL 1
#endif

#define PIECE_BYTES 256u  // bytes per thread of the AEAD main kernel: 4 ChaCha20 blocks, 16 Poly1305 blocks

// Where the one-time Poly1305 key lives while the operation runs (device memory, zeroed after).
struct poly1305_key {
  poly1305_elem power[POLY1305_POWERS];  // r^(2^e)
  poly1305_mul_by piece_power[16];       // r^(16 - i) for a piece's block i (POLY1305_CHAINS 16)
  unsigned int s[4];
};

CIPHER_FN void chacha20_load_params(const chacha20_params* p, unsigned int key[8], unsigned int nonce[3],
                                    unsigned int* counter) {
#pragma unroll
  for (int i = 0; i < 8; ++i) key[i] = p->key[i];
#pragma unroll
  for (int i = 0; i < 3; ++i) nonce[i] = p->nonce[i];
  *counter = p->counter;
}

// XORs one 64-byte block at offset `at` of an n-byte message with keystream ks; the ciphertext
// words go to ct (zero-padded past the end) when the caller MACs them.
CIPHER_FN void chacha20_xor_block(const unsigned char* in, unsigned char* out, unsigned long long at,
                                  unsigned long long n, const unsigned int ks[16], cipher_vec4 ct[4]) {
  if (at + 64u <= n) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const cipher_vec4 x = cipher_load16<ALIGNED != 0>(in + at + 16 * j);
      const cipher_vec4 y = cipher_xor(x, ks + 4 * j);
      cipher_store16<ALIGNED != 0>(out + at + 16 * j, y);
      ct[j] = DECRYPT ? x : y;
    }
    return;
  }
  for (int j = 0; j < 4; ++j) {
    const unsigned long long p = at + 16u * j;
    const unsigned int left = p >= n ? 0u : (n - p >= 16u ? 16u : (unsigned int)(n - p));
    const cipher_vec4 x = cipher_load_partial(in + (p < n ? p : 0), left);
    cipher_vec4 y = cipher_xor(x, ks + 4 * j);
    cipher_store_partial(out + (p < n ? p : 0), y, left);
    y = cipher_keep_bytes(y, left);  // Poly1305 pads the ciphertext with zeros
    ct[j] = DECRYPT ? x : y;
  }
}

// Whole 64-byte blocks only (the host launches 32 threads per 64 blocks, rounded up;
// chacha20_xor_tail takes the last n % 64 bytes), two per thread: warp w takes blocks 64 w ..
// 64 w + 63, lane l blocks 64 w + l and 64 w + 32 + l, so each 16-byte load or store of the warp
// touches the same 16 bytes of 32 consecutive blocks (as with one block per thread). The pair
// shares its counter-free quarter rounds (chacha20_shared_start). With no partial-block path here,
// the kernel's SASS is exactly the work that tools/sass_count.py counts.
__global__ void chacha20_xor(const unsigned char* in, unsigned char* out, unsigned long long blocks,
                             const chacha20_params* params) {
  const unsigned long long thread = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long first = (thread >> 5) * 64u + (thread & 31u), second = first + 32u;
  if (first >= blocks) return;
  unsigned int key[8], nonce[3], counter, init[16], shared[16], ks[16];
  chacha20_load_params(params, key, nonce, &counter);
  chacha20_shared_start(init, shared, key, nonce);
#if CHACHA20_SCHEDULE == 0
  cipher_vec4 unused[4];
  chacha20_block_from(ks, init, shared, counter + (unsigned int)first);
  chacha20_xor_block(in, out, first * 64u, first * 64u + 64u, ks, unused);
  chacha20_block_from(ks, init, shared, counter + (unsigned int)second);
  if (second < blocks) chacha20_xor_block(in, out, second * 64u, second * 64u + 64u, ks, unused);
#else
  const bool has_second = second < blocks;
  cipher_vec4 a[4], b[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    a[j] = cipher_load16<ALIGNED != 0>(in + first * 64u + 16 * j);
    b[j] = has_second ? cipher_load16<ALIGNED != 0>(in + second * 64u + 16 * j) : a[j];
  }
  unsigned int ks2[16];
  chacha20_block_from(ks, init, shared, counter + (unsigned int)first);
  chacha20_block_from(ks2, init, shared, counter + (unsigned int)second);
#pragma unroll
  for (int j = 0; j < 4; ++j) cipher_store16<ALIGNED != 0>(out + first * 64u + 16 * j, cipher_xor(a[j], ks + 4 * j));
  if (has_second) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      cipher_store16<ALIGNED != 0>(out + second * 64u + 16 * j, cipher_xor(b[j], ks2 + 4 * j));
  }
#endif
}

// The last n % 64 (> 0) bytes of an n-byte message: one thread, byte by byte.
__global__ void chacha20_xor_tail(const unsigned char* in, unsigned char* out, unsigned long long n,
                                  const chacha20_params* params) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  unsigned int key[8], nonce[3], counter, ks[16];
  chacha20_load_params(params, key, nonce, &counter);
  const unsigned long long at = n & ~63ull;
  chacha20_block(ks, key, counter + (unsigned int)(at / 64u), nonce);
  cipher_vec4 unused[4];
  chacha20_xor_block(in, out, at, n, ks, unused);
}

// One thread: the one-time key (RFC 8439 2.6: block 0 of the stream) and the power table.
__global__ void chacha20_poly1305_setup(const chacha20_params* params, poly1305_key* key_out) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  unsigned int key[8], nonce[3], counter, ks[16];
  chacha20_load_params(params, key, nonce, &counter);
  chacha20_block(ks, key, 0u, nonce);
  poly1305_elem r = poly1305_clamped_r(ks);
  const poly1305_mul_by r1 = poly1305_multiplier(r);
  poly1305_elem rk = r;
  for (int i = 15; i >= 0; --i) {  // r^1 .. r^16
    key_out->piece_power[i] = poly1305_multiplier(rk);
    rk = poly1305_mul(rk, r1);
  }
  key_out->power[0] = r;
  for (int e = 1; e < POLY1305_POWERS; ++e) {
    r = poly1305_mul(r, poly1305_multiplier(r));
    key_out->power[e] = r;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) key_out->s[i] = ks[4 + i];
#pragma unroll
  for (int i = 0; i < 16; ++i) ks[i] = 0;
}

CIPHER_FN int log2_of(unsigned long long x) {
  int e = 0;
  while ((1ull << e) < x) ++e;
  return e;
}

// Shared-memory tree over BLOCK values, each covering 2^unit_log2 Poly1305 blocks; returns the
// combined value in thread 0. Steps depend only on thread indices.
CIPHER_FN poly1305_elem poly1305_block_tree(poly1305_elem h, const poly1305_key* key, int unit_log2) {
  __shared__ poly1305_elem tree[BLOCK];
  const unsigned int tid = threadIdx.x;
  tree[tid] = h;
  __syncthreads();
  for (unsigned int s = 1, e = 0; s < BLOCK; s <<= 1, ++e) {
    poly1305_elem combined;
    const bool left = tid % (2u * s) == 0u;
    if (left)
      combined = poly1305_add(poly1305_mul(tree[tid], poly1305_multiplier(key->power[unit_log2 + e])), tree[tid + s]);
    __syncthreads();
    if (left) tree[tid] = combined;
    __syncthreads();
  }
  return tree[0];
}

// Poly1305 over one piece's 16 ciphertext blocks, as POLY1305_CHAINS says.
struct piece_mac {
  poly1305_columns sum;  // 16: the products so far
  poly1305_elem h;       // 1: the Horner value so far
};

CIPHER_FN piece_mac piece_mac_start() {
  piece_mac mac;
  mac.sum = poly1305_columns_zero();
  mac.h = poly1305_zero();
  return mac;
}

// Block `index` (0..15) of the piece; powers: r^16 .. r^1 (POLY1305_CHAINS 16), r: r (1).
CIPHER_FN void piece_mac_block(piece_mac& mac, const cipher_vec4& block, int index, const poly1305_mul_by* powers,
                               const poly1305_mul_by& r) {
#if POLY1305_CHAINS == 16
  (void)r;
  poly1305_mul_add(mac.sum, poly1305_block(block), powers[index]);
#else
  (void)powers, (void)index;
  mac.h = poly1305_step(mac.h, block, r);
#endif
}

CIPHER_FN poly1305_elem piece_mac_value(const piece_mac& mac) {
#if POLY1305_CHAINS == 16
  return poly1305_reduce(mac.sum);
#else
  return mac.h;
#endif
}

// Pieces [0, full_pieces) of 256 bytes, right-aligned: virtual thread v runs piece v - pad.
// partials[blockIdx.x] = Poly of the block's pieces. The minimum of one block per SM is not a
// no-op: ptxas then gives the kernel 96 registers (two blocks per SM) rather than the 64 it picks
// with no minimum, and that ran faster on the H200 (1 GiB encrypt / decrypt: 862 / 874 GB/s
// against 523 / 443).
__global__ void __launch_bounds__(BLOCK, 1)
    chacha20_poly1305_main(const unsigned char* in, unsigned char* out, unsigned long long full_pieces,
                           unsigned long long pad, const chacha20_params* params, const poly1305_key* key,
                           poly1305_elem* partials) {
  const unsigned long long v = (unsigned long long)blockIdx.x * BLOCK + threadIdx.x;
  piece_mac mac = piece_mac_start();
  __shared__ poly1305_mul_by powers[POLY1305_CHAINS == 16 ? 16 : 1];
#if POLY1305_CHAINS == 16
  if (threadIdx.x < 16) powers[threadIdx.x] = key->piece_power[threadIdx.x];
  __syncthreads();
#endif
  const poly1305_mul_by r = poly1305_multiplier(key->power[0]);
  if (v >= pad && v - pad < full_pieces) {
    const unsigned long long piece = v - pad;
    const unsigned char* piece_in = in + piece * PIECE_BYTES;
    unsigned char* piece_out = out + piece * PIECE_BYTES;
    unsigned int k[8], nonce[3], counter, init[16], shared[16], ks[16];
    chacha20_load_params(params, k, nonce, &counter);
    chacha20_shared_start(init, shared, k, nonce);  // once for the piece's 4 blocks
    // Each block's input is loaded before its rounds, which then hide the loads' latency (as in
    // chacha20_xor's schedule 1).
#pragma unroll 1
    for (int c = 0; c < 4; ++c) {
      cipher_vec4 x[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) x[j] = cipher_load16<ALIGNED != 0>(piece_in + 64 * c + 16 * j);
      chacha20_block_from<CHACHA20_AEAD_ROUNDS_UNROLL>(ks, init, shared,
                                                       1u + (unsigned int)(piece * 4u) + (unsigned int)c);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const cipher_vec4 y = cipher_xor(x[j], ks + 4 * j);
        cipher_store16<ALIGNED != 0>(piece_out + 64 * c + 16 * j, y);
        piece_mac_block(mac, DECRYPT ? x[j] : y, 4 * c + j, powers, r);
      }
    }
  }
  const poly1305_elem h = poly1305_block_tree(piece_mac_value(mac), key, 4);  // a piece is 2^4 blocks
  if (threadIdx.x == 0) partials[blockIdx.x] = h;
}

// One block. Combines `groups` partials (each BLOCK pieces), right-aligned in BLOCK runs of
// per_thread (a power of two); thread 0 then adds the last piece (bytes from last_at to n), the
// AAD in front and the length block behind, and writes the 16-byte tag.
__global__ void __launch_bounds__(BLOCK)
    chacha20_poly1305_finish(const unsigned char* in, unsigned char* out, unsigned long long n,
                             unsigned long long last_at, const chacha20_params* params, const poly1305_key* key,
                             const poly1305_elem* partials, unsigned long long groups, unsigned long long per_thread,
                             const unsigned char* aad, unsigned long long aad_bytes, unsigned char* tag) {
  const int group_log2 = 4 + log2_of(BLOCK);
  const unsigned long long pad = per_thread * BLOCK - groups;
  const poly1305_mul_by group_mul = poly1305_multiplier(key->power[group_log2]);
  poly1305_elem h = poly1305_zero();
  for (unsigned long long i = 0; i < per_thread; ++i) {
    const unsigned long long v = threadIdx.x * per_thread + i;
    const poly1305_elem p = v >= pad ? partials[v - pad] : poly1305_zero();
    h = poly1305_add(poly1305_mul(h, group_mul), p);
  }
  h = poly1305_block_tree(h, key, group_log2 + log2_of(per_thread));
  if (threadIdx.x != 0) return;

  const poly1305_mul_by r = poly1305_multiplier(key->power[0]);
  poly1305_elem last = poly1305_zero();
  if (last_at < n) {  // the last piece, 1..256 bytes
    unsigned int k[8], nonce[3], counter, ks[16];
    chacha20_load_params(params, k, nonce, &counter);
    for (unsigned long long at = last_at; at < n; at += 64u) {
      chacha20_block(ks, k, 1u + (unsigned int)(at / 64u), nonce);
      cipher_vec4 ct[4];
      chacha20_xor_block(in, out, at, n, ks, ct);
      for (int j = 0; j < 4 && at + 16u * j < n; ++j) last = poly1305_step(last, ct[j], r);
    }
    const unsigned long long last_blocks = (n - last_at + 15u) / 16u;
    h = poly1305_add(poly1305_mul(h, poly1305_multiplier(poly1305_pow(key->power, last_blocks))), last);
  }
  poly1305_elem a = poly1305_zero();
  for (unsigned long long at = 0; at < aad_bytes; at += 16u) {
    const unsigned int left = aad_bytes - at >= 16u ? 16u : (unsigned int)(aad_bytes - at);
    a = poly1305_step(a, cipher_load_partial(aad + at, left), r);
  }
  h = poly1305_add(poly1305_mul(a, poly1305_multiplier(poly1305_pow(key->power, (n + 15u) / 16u))), h);
  cipher_vec4 lengths;
  lengths.x = (unsigned int)aad_bytes, lengths.y = (unsigned int)(aad_bytes >> 32);
  lengths.z = (unsigned int)n, lengths.w = (unsigned int)(n >> 32);
  h = poly1305_step(h, lengths, r);
  cipher_store_partial(tag, poly1305_finish(h, key->s), 16u);
}
