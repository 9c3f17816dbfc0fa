// Variable-length batch SHA-256 / SHA-256d: message i is data[offsets[i], offsets[i + 1]), at any
// alignment; one thread per message. Offsets that run backwards or past `data_bytes` are not
// hashed: the smallest such message index (plus first_index, the batch
// position of this launch's first message) is left in *bad_index (initialised by the caller to
// ~0), and the host reports it.
//
// Compile-time parameters (-D):
//   DOUBLE_HASH  1: SHA-256(SHA-256(m)); 0 (default): SHA-256(m)
//   STORE_ALIGN  widest aligned store of digests allowed (16, 4 or 1; default 1)
// Launch: any 1-D block size; grid = ceil(count / blockDim.x).
#include "sha256_io.cuh"

#ifndef DOUBLE_HASH
#define DOUBLE_HASH 0
#endif
#ifndef STORE_ALIGN
#define STORE_ALIGN 1
#endif

extern "C" __global__ void sha256_var(const unsigned char* __restrict__ data, unsigned long long data_bytes,
                                      const unsigned long long* __restrict__ offsets, unsigned long long count,
                                      unsigned char* __restrict__ digests, unsigned long long first_index,
                                      unsigned long long* bad_index) {
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const unsigned long long start = offsets[i];
  const unsigned long long stop = offsets[i + 1];
  if (stop < start || stop > data_bytes) {
    atomicMin(bad_index, first_index + i);
    return;
  }
  const unsigned long long len = stop - start;
  const unsigned char* m = data + start;
  const unsigned char* end = data + data_bytes;

  unsigned int state[8];
  unsigned int w[16];
  sha256_init(state);
  const unsigned long long data_blocks = len / 64u;
  for (unsigned long long b = 0; b < data_blocks; ++b) {
    sha256_load_block_unaligned(w, m + 64u * b, data, end);
    sha256_compress(state, w);
  }
  // The one or two blocks holding the rest of the message, 0x80, zeros and the bit length.
  const unsigned int tail_blocks = (len % 64u) + 9u > 64u ? 2u : 1u;
  for (unsigned int t = 0; t < tail_blocks; ++t) {
    const unsigned long long base = (data_blocks + t) * 64u;
    SHA256_UNROLL
    for (int j = 0; j < 16; ++j) {
      const unsigned long long p = base + 4u * static_cast<unsigned int>(j);
      if (p + 4u <= len)
        w[j] = sha256_load_be_unaligned(m + p, data, end);
      else
        w[j] = p <= len ? sha256_tail_word(m, p, len) : 0u;
    }
    if (t + 1u == tail_blocks) {
      w[14] = static_cast<unsigned int>((len * 8u) >> 32);
      w[15] = static_cast<unsigned int>(len * 8u);
    }
    sha256_compress(state, w);
  }
#if DOUBLE_HASH
  unsigned int first[8];
  for (int k = 0; k < 8; ++k) first[k] = state[k];
  sha256_of_32(first, state);
#endif
  sha256_store_digest(digests + i * 32u, state, STORE_ALIGN);
}
