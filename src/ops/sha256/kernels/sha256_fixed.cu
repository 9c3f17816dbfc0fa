// Fixed-length batch SHA-256 / SHA-256d: `count` messages of MSG_LEN bytes each, contiguous, to
// `count` 32-byte digests. Compiled per length, so the padding and length words are constants.
//
// Compile-time parameters (-D):
//   MSG_LEN      bytes per message (required)
//   DOUBLE_HASH  1: SHA-256(SHA-256(m)) as Bitcoin uses it; 0 (default): SHA-256(m)
//   LOAD_ALIGN   widest aligned load of messages allowed (16, 8, 4 or 1; default 1): the largest
//                power of two dividing both the data address and MSG_LEN
//   STORE_ALIGN  widest aligned store of digests allowed (16, 4 or 1; default 1)
//   PER_THREAD   messages per thread (default 1)
// Launch: any 1-D block size; grid = ceil(count / (blockDim.x * PER_THREAD)); count <= 2^30.
#include "sha256_io.cuh"

#ifndef MSG_LEN
#error "sha256_fixed.cu: define MSG_LEN, the length of every message in bytes"
#endif
#ifndef DOUBLE_HASH
#define DOUBLE_HASH 0
#endif
#ifndef LOAD_ALIGN
#define LOAD_ALIGN 1
#endif
#ifndef STORE_ALIGN
#define STORE_ALIGN 1
#endif
#ifndef PER_THREAD
#define PER_THREAD 1
#endif

#define SHA256_LEN ((unsigned long long)(MSG_LEN))
// Blocks made only of message bytes, then the one or two blocks that hold the padding.
#define SHA256_DATA_BLOCKS (SHA256_LEN / 64u)
#define SHA256_TAIL_BLOCKS ((SHA256_LEN % 64u) + 9u > 64u ? 2u : 1u)

// Bit j set: word j of tail block `block` (counted from the first tail block) is padding only, a
// constant: it starts at or past the end of the message, or holds the bit length.
constexpr unsigned int sha256_fixed_known_words(unsigned int block) {
  unsigned int known = block + 1u == SHA256_TAIL_BLOCKS ? 0xc000u : 0u;
  for (unsigned int j = 0; j < 16; ++j)
    if ((SHA256_DATA_BLOCKS + block) * 64u + 4u * j + 1u > SHA256_LEN) known |= 1u << j;  // >= without a warning at 0
  return known;
}

// Fills w with padded block `block` (counted from the first tail block) of message m.
SHA256_FN void sha256_fixed_tail_block(unsigned int w[16], const unsigned char* m, unsigned int block) {
  const unsigned long long base = (SHA256_DATA_BLOCKS + block) * 64u;
  for (int j = 0; j < 16; j += 4) {
    const unsigned long long p = base + 4u * static_cast<unsigned int>(j);
    if (p + 16u <= SHA256_LEN) {
      sha256_load_words(w + j, m + p, 4, LOAD_ALIGN);
    } else {
      for (int k = 0; k < 4; ++k) {
        const unsigned long long q = p + 4u * static_cast<unsigned int>(k);
        if (q + 4u <= SHA256_LEN)
          sha256_load_words(w + j + k, m + q, 1, LOAD_ALIGN);
        else
          w[j + k] = q <= SHA256_LEN ? sha256_tail_word(m, q, SHA256_LEN) : 0u;
      }
    }
  }
  if (block + 1u == SHA256_TAIL_BLOCKS) {
    w[14] = static_cast<unsigned int>((SHA256_LEN * 8u) >> 32);
    w[15] = static_cast<unsigned int>(SHA256_LEN * 8u);
  }
}

// The digest state of message m. The first block goes through sha256_compress_first (constant
// initial state), and the padding words of the tail blocks are declared constant.
SHA256_FN void sha256_fixed_message(const unsigned char* m, unsigned int state[8]) {
  unsigned int w[16];
#if (MSG_LEN) >= 64
  for (int j = 0; j < 16; j += 4) sha256_load_words(w + j, m + 4 * j, 4, LOAD_ALIGN);
  sha256_compress_first(state, w);
  for (unsigned long long b = 1; b < SHA256_DATA_BLOCKS; ++b) {
    const unsigned char* block = m + b * 64u;
    for (int j = 0; j < 16; j += 4) sha256_load_words(w + j, block + 4 * j, 4, LOAD_ALIGN);
    sha256_compress(state, w);
  }
  sha256_fixed_tail_block(w, m, 0u);
  sha256_compress<sha256_fixed_known_words(0u)>(state, w);
#else
  sha256_fixed_tail_block(w, m, 0u);
  sha256_compress_first<sha256_fixed_known_words(0u)>(state, w);
#endif
  if constexpr (SHA256_TAIL_BLOCKS == 2u) {
    sha256_fixed_tail_block(w, m, 1u);
    sha256_compress<sha256_fixed_known_words(1u)>(state, w);
  }
#if DOUBLE_HASH
  unsigned int first[8];
  for (int i = 0; i < 8; ++i) first[i] = state[i];
  sha256_of_32(first, state);
#endif
}

// count <= 2^30 (Sha256Kernel splits larger batches), so message indices fit in 32 bits: an
// address is then one IMAD.WIDE on the FMA pipe instead of 64-bit adds and a shift on the ALU
// pipe, which the hash saturates.
extern "C" __global__ void sha256_fixed(const unsigned char* __restrict__ data, unsigned char* __restrict__ digests,
                                        unsigned long long count) {
  const unsigned int n = static_cast<unsigned int>(count);
  const unsigned int group = blockDim.x * PER_THREAD;
  const unsigned int first = blockIdx.x * group + threadIdx.x;
  if (first >= n) return;
  unsigned int state[PER_THREAD][8];
  // Messages past the end are replaced by the last one, so that the hashes need no branch and
  // ptxas can interleave them; only the stores are conditional.
  SHA256_UNROLL
  for (int k = 0; k < PER_THREAD; ++k) {
    unsigned int i = first + static_cast<unsigned int>(k) * blockDim.x;
    if (i >= n) i = n - 1u;
    sha256_fixed_message(data + static_cast<unsigned long long>(i) * SHA256_LEN, state[k]);
  }
  SHA256_UNROLL
  for (int k = 0; k < PER_THREAD; ++k) {
    const unsigned int i = first + static_cast<unsigned int>(k) * blockDim.x;
    if (i < n) sha256_store_digest(digests + static_cast<unsigned long long>(i) * 32u, state[k], STORE_ALIGN);
  }
}
