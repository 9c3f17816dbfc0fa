// The ChaCha20 block function (RFC 8439 section 2.3) and 16-byte loads/stores for the cipher
// kernels. Constant time by construction: only additions, XORs and fixed rotations, no branch or
// address that depends on the key or the data. NVRTC, nvcc and host compilers (CPU backend).
#ifndef OPKIT_CHACHA20_CUH
#define OPKIT_CHACHA20_CUH

#define CIPHER_FN __device__ __forceinline__

struct alignas(16) cipher_vec4 {
  unsigned int x, y, z, w;
};

// Rotation left by a constant: the GPU compiles it to one funnel shift (SHF.L.W); host compilers
// to one rotate instruction.
template <int N>
CIPHER_FN unsigned int chacha20_rotl(unsigned int x) {
  return (x << N) | (x >> (32 - N));
}

#define CHACHA20_QR(a, b, c, d) \
  a += b;                       \
  d = chacha20_rotl<16>(d ^ a); \
  c += d;                       \
  b = chacha20_rotl<12>(b ^ c); \
  a += b;                       \
  d = chacha20_rotl<8>(d ^ a);  \
  c += d;                       \
  b = chacha20_rotl<7>(b ^ c)

// The initial state: constants, key words k[0..8), block counter, nonce words n[0..3).
CIPHER_FN void chacha20_init(unsigned int x[16], const unsigned int k[8], unsigned int counter,
                             const unsigned int n[3]) {
  const unsigned int init[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u, k[0],    k[1], k[2], k[3],
                                 k[4],        k[5],        k[6],        k[7],        counter, n[0], n[1], n[2]};
#pragma unroll
  for (int i = 0; i < 16; ++i) x[i] = init[i];
}

// The 20 rounds split in two: the first column round's quarter rounds on columns 1..3, which do
// not involve the counter (word 12) and so are the same for every block of a message, then the
// rest (column 0, the first diagonal round, nine double rounds). The quarter rounds of one round
// touch disjoint words, so doing column 0 last changes nothing.
CIPHER_FN void chacha20_rounds_counter_free(unsigned int x[16]) {
  CHACHA20_QR(x[1], x[5], x[9], x[13]);
  CHACHA20_QR(x[2], x[6], x[10], x[14]);
  CHACHA20_QR(x[3], x[7], x[11], x[15]);
}

CIPHER_FN void chacha20_diagonal_round(unsigned int x[16]) {
  CHACHA20_QR(x[0], x[5], x[10], x[15]);
  CHACHA20_QR(x[1], x[6], x[11], x[12]);
  CHACHA20_QR(x[2], x[7], x[8], x[13]);
  CHACHA20_QR(x[3], x[4], x[9], x[14]);
}

// Unroll: how many of the nine double rounds after the first one loop iteration holds (9: all,
// no loop). A kernel whose body would not fit the instruction cache takes fewer (chacha20_bulk.cu's
// AEAD kernel: 1).
template <int Unroll = 9>
CIPHER_FN void chacha20_rounds_rest(unsigned int x[16]) {
  CHACHA20_QR(x[0], x[4], x[8], x[12]);
  chacha20_diagonal_round(x);
#pragma unroll Unroll
  for (int round = 1; round < 10; ++round) {
    CHACHA20_QR(x[1], x[5], x[9], x[13]);
    CHACHA20_QR(x[2], x[6], x[10], x[14]);
    CHACHA20_QR(x[3], x[7], x[11], x[15]);
    CHACHA20_QR(x[0], x[4], x[8], x[12]);
    chacha20_diagonal_round(x);
  }
}

// Keystream block for (key words k[0..8), block counter, nonce words n[0..3)) into ks[0..16),
// little-endian words as RFC 8439 serializes them.
CIPHER_FN void chacha20_block(unsigned int ks[16], const unsigned int k[8], unsigned int counter,
                              const unsigned int n[3]) {
  unsigned int init[16], x[16];
  chacha20_init(init, k, counter, n);
#pragma unroll
  for (int i = 0; i < 16; ++i) x[i] = init[i];
  chacha20_rounds_counter_free(x);
  chacha20_rounds_rest(x);
#pragma unroll
  for (int i = 0; i < 16; ++i) ks[i] = x[i] + init[i];
}

// Blocks of one key and nonce share the counter-free quarter rounds: chacha20_shared_start
// computes them once (init: the initial state, any counter; shared: after those quarter rounds),
// chacha20_block_from finishes the block of counter c from there. 24 ALU instructions fewer per
// block after the first (ptxas does not find this itself; it sometimes moves a part of that work
// to the uniform datapath).
CIPHER_FN void chacha20_shared_start(unsigned int init[16], unsigned int shared[16], const unsigned int k[8],
                                     const unsigned int n[3]) {
  chacha20_init(init, k, 0u, n);
#pragma unroll
  for (int i = 0; i < 16; ++i) shared[i] = init[i];
  chacha20_rounds_counter_free(shared);
}

template <int Unroll = 9>
CIPHER_FN void chacha20_block_from(unsigned int ks[16], const unsigned int init[16], const unsigned int shared[16],
                                   unsigned int c) {
  unsigned int x[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) x[i] = shared[i];
  x[12] = c;
  chacha20_rounds_rest<Unroll>(x);
#pragma unroll
  for (int i = 0; i < 16; ++i) ks[i] = x[i] + (i == 12 ? c : init[i]);
}

// 16 bytes at p as four little-endian words: one 128-bit load when p is 16-byte aligned
// (VECTOR), else byte loads. The host compiler gets memcpy (no strict-aliasing games).
template <bool VECTOR>
CIPHER_FN cipher_vec4 cipher_load16(const unsigned char* p) {
  cipher_vec4 v;
  if (VECTOR) {
#ifdef __CUDA_ARCH__
    v = *reinterpret_cast<const cipher_vec4*>(p);
#else
    __builtin_memcpy(&v, p, 16);
#endif
  } else {
    unsigned int w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      w[i] = static_cast<unsigned int>(p[4 * i]) | (static_cast<unsigned int>(p[4 * i + 1]) << 8) |
             (static_cast<unsigned int>(p[4 * i + 2]) << 16) | (static_cast<unsigned int>(p[4 * i + 3]) << 24);
    v.x = w[0], v.y = w[1], v.z = w[2], v.w = w[3];
  }
  return v;
}

template <bool VECTOR>
CIPHER_FN void cipher_store16(unsigned char* p, const cipher_vec4& v) {
  if (VECTOR) {
#ifdef __CUDA_ARCH__
    *reinterpret_cast<cipher_vec4*>(p) = v;
#else
    __builtin_memcpy(p, &v, 16);
#endif
  } else {
    const unsigned int w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int b = 0; b < 4; ++b) p[4 * i + b] = static_cast<unsigned char>(w[i] >> (8 * b));
  }
}

// The first `n` (<= 16) bytes at p, zero-padded to 16, as words (the message tail). Unrolled with
// a predicate per byte, so that the words stay in registers: a loop with a run-time index into
// the word array would put it in local memory.
CIPHER_FN cipher_vec4 cipher_load_partial(const unsigned char* p, unsigned int n) {
  unsigned int w[4] = {0, 0, 0, 0};
#pragma unroll
  for (unsigned int i = 0; i < 16; ++i)
    if (i < n) w[i / 4] |= static_cast<unsigned int>(p[i]) << (8 * (i % 4));
  cipher_vec4 v;
  v.x = w[0], v.y = w[1], v.z = w[2], v.w = w[3];
  return v;
}

CIPHER_FN void cipher_store_partial(unsigned char* p, const cipher_vec4& v, unsigned int n) {
  const unsigned int w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (unsigned int i = 0; i < 16; ++i)
    if (i < n) p[i] = static_cast<unsigned char>(w[i / 4] >> (8 * (i % 4)));
}

// v with bytes [n, 16) cleared (n <= 16); masks, no branch on n's value per byte.
CIPHER_FN cipher_vec4 cipher_keep_bytes(const cipher_vec4& v, unsigned int n) {
  unsigned int w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (unsigned int i = 0; i < 4; ++i) {
    const unsigned int keep = n >= 4u * i + 4u ? 4u : (n > 4u * i ? n - 4u * i : 0u);
    w[i] &= keep == 4u ? 0xffffffffu : ((1u << (8u * keep)) - 1u);
  }
  cipher_vec4 out;
  out.x = w[0], out.y = w[1], out.z = w[2], out.w = w[3];
  return out;
}

CIPHER_FN cipher_vec4 cipher_xor(const cipher_vec4& a, const unsigned int* ks) {
  cipher_vec4 v;
  v.x = a.x ^ ks[0], v.y = a.y ^ ks[1], v.z = a.z ^ ks[2], v.w = a.w ^ ks[3];
  return v;
}

// Key material as the kernels receive it (a device buffer, zeroed by the host when the operation
// ends): the 8 key words, the first block counter, the 3 nonce words.
struct chacha20_params {
  unsigned int key[8];
  unsigned int counter;
  unsigned int nonce[3];
};

#endif
