// Byte copies shared by the LZ4 kernels, `threads` threads of a block copying together (thread t).
// A plain `for (j = t; j < n; j += threads) to[j] = from[j]` waits out each load's latency before
// its store (the compiler cannot tell the two pointers apart), one round trip per 32 bytes a warp;
// here each thread has `Unroll` (LZ4K_COPY_UNROLL unless the caller needs the registers) loads in
// flight before it stores any of them. Byte
// accesses, coalesced across a warp: the two sides rarely share an alignment (frame offsets are
// arbitrary), and nothing outside [from, from + n) or [to, to + n) is touched.
#pragma once

#define LZ4K_COPY_UNROLL 16u

// The copy loop itself: byte j of `to` comes from source(j), called for each thread's j in
// increasing order (so a source may keep a running index) and only for j < n.
template <unsigned int Unroll, typename Source>
__device__ __forceinline__ void lz4k_copy_with(unsigned char* to, Source source, unsigned int n, unsigned int t,
                                               unsigned int threads) {
  for (unsigned int j0 = 0; j0 < n; j0 += threads * Unroll) {
    unsigned char v[Unroll];
#pragma unroll
    for (unsigned int u = 0; u < Unroll; ++u) {
      const unsigned int j = j0 + u * threads + t;
      v[u] = j < n ? source(j) : 0;
    }
#pragma unroll
    for (unsigned int u = 0; u < Unroll; ++u) {
      const unsigned int j = j0 + u * threads + t;
      if (j < n) to[j] = v[u];
    }
  }
}

template <unsigned int Unroll = LZ4K_COPY_UNROLL>
__device__ __forceinline__ void lz4k_copy(unsigned char* to, const unsigned char* from, unsigned int n, unsigned int t,
                                          unsigned int threads) {
  lz4k_copy_with<Unroll>(
      to, [from](unsigned int j) { return from[j]; }, n, t, threads);
}
