// Block checksums: xxHash32 of each range data[offsets[i], offsets[i] + lengths[i]), one thread
// per range. Launch: any 1-D block; grid = ceil(count / blockDim.x).
#include "xxh32.cuh"

extern "C" __global__ void lz4_xxh32(const unsigned char* data, const unsigned long long* offsets,
                                     const unsigned int* lengths, unsigned long long count, unsigned int* hashes) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  hashes[i] = xxh32(data + offsets[i], lengths[i] & 0x7FFFFFFFu);
}
