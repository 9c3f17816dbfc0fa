// Byte moves on the device for frame assembly and output packing: entry i copies
// src[src_offsets[i], + lengths[i]) to dst[dst_offsets[i], ...). The ranges never overlap.
// Launch: any 1-D block (all its threads copy one entry), grid = count.
#include "lz4_copy.cuh"

extern "C" __global__ void lz4_scatter(const unsigned char* src, const unsigned long long* src_offsets,
                                       const unsigned int* lengths, unsigned char* dst,
                                       const unsigned long long* dst_offsets) {
  const unsigned int i = blockIdx.x;
  const unsigned char* from = src + src_offsets[i];
  unsigned char* to = dst + dst_offsets[i];
  const unsigned int n = lengths[i];
  lz4k_copy(to, from, n, threadIdx.x, blockDim.x);
}
