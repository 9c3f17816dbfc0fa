// Byte copies shared by the LZ4 kernels, `threads` threads of a block copying together (thread t).
// A plain `for (j = t; j < n; j += threads) to[j] = from[j]` waits out each load's latency before
// its store (the compiler cannot tell the two pointers apart), one round trip per 32 bytes a warp;
// here each thread has `Unroll` (LZ4K_COPY_UNROLL unless the caller needs the registers) loads in
// flight before it stores any of them. Byte
// accesses, coalesced across a warp: the two sides rarely share an alignment (frame offsets are
// arbitrary), and nothing outside [from, from + n) or [to, to + n) is touched.
#pragma once

#define LZ4K_COPY_UNROLL 16u

// 16 bytes at p (16-byte aligned) as four words: one load on a GPU (the host compiler gets memcpy:
// no strict-aliasing games).
__device__ __forceinline__ void lz4k_load16(const void* p, unsigned int w[4]) {
#ifdef __CUDA_ARCH__
  const uint4 v = *(const uint4*)p;
  w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#else
  __builtin_memcpy(w, p, 16);
#endif
}

// Four words to p (16-byte aligned): one store on a GPU.
__device__ __forceinline__ void lz4k_store16(void* p, unsigned int a, unsigned int b, unsigned int c, unsigned int d) {
#ifdef __CUDA_ARCH__
  *(uint4*)p = make_uint4(a, b, c, d);
#else
  const unsigned int words[4] = {a, b, c, d};
  __builtin_memcpy(p, words, 16);
#endif
}

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
