// Frame assembly on the device: block i's stored bytes move from its slot to frame[offsets[i] + 4],
// preceded by its little-endian size word and followed, when hashes is not null, by its xxHash32.
// Launch: any 1-D block (all its threads copy one block's bytes), grid = count.
#include "lz4_copy.cuh"

extern "C" __global__ void lz4_gather(const unsigned char* slots, unsigned long long slot_bytes,
                                      const unsigned int* sizes, const unsigned long long* offsets,
                                      const unsigned int* hashes, unsigned char* frame) {
  const unsigned int i = blockIdx.x;
  const unsigned int word = sizes[i];
  const unsigned int stored = word & 0x7FFFFFFFu;
  const unsigned char* from = slots + (unsigned long long)i * slot_bytes;
  unsigned char* to = frame + offsets[i];
  if (threadIdx.x < 4) to[threadIdx.x] = (unsigned char)(word >> (8 * threadIdx.x));
  lz4k_copy(to + 4, from, stored, threadIdx.x, blockDim.x);
  if (hashes != 0 && threadIdx.x < 4) to[4 + stored + threadIdx.x] = (unsigned char)(hashes[i] >> (8 * threadIdx.x));
}
