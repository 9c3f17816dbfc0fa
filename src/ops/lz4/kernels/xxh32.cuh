// xxHash32 (seed 0) of a byte range, one thread, for the frame's block checksums. The algorithm
// is Yann Collet's xxHash32; tests compare it with libxxhash.
#pragma once

#define XXH32_P1 2654435761u
#define XXH32_P2 2246822519u
#define XXH32_P3 3266489917u
#define XXH32_P4 668265263u
#define XXH32_P5 374761393u

__device__ __forceinline__ unsigned int xxh32_rotl(unsigned int x, int r) {
  return (x << r) | (x >> (32 - r));
}

__device__ __forceinline__ unsigned int xxh32_read32(const unsigned char* p) {
  return (unsigned int)p[0] | ((unsigned int)p[1] << 8) | ((unsigned int)p[2] << 16) | ((unsigned int)p[3] << 24);
}

__device__ __forceinline__ unsigned int xxh32_round(unsigned int v, unsigned int lane) {
  return xxh32_rotl(v + lane * XXH32_P2, 13) * XXH32_P1;
}

__device__ unsigned int xxh32(const unsigned char* p, unsigned long long len) {
  const unsigned char* end = p + len;
  unsigned int h;
  if (len >= 16) {
    unsigned int v1 = XXH32_P1 + XXH32_P2, v2 = XXH32_P2, v3 = 0u, v4 = 0u - XXH32_P1;
    const unsigned char* limit = end - 16;
    do {
      v1 = xxh32_round(v1, xxh32_read32(p));
      v2 = xxh32_round(v2, xxh32_read32(p + 4));
      v3 = xxh32_round(v3, xxh32_read32(p + 8));
      v4 = xxh32_round(v4, xxh32_read32(p + 12));
      p += 16;
    } while (p <= limit);
    h = xxh32_rotl(v1, 1) + xxh32_rotl(v2, 7) + xxh32_rotl(v3, 12) + xxh32_rotl(v4, 18);
  } else {
    h = XXH32_P5;
  }
  h += (unsigned int)len;
  for (; p + 4 <= end; p += 4) h = xxh32_rotl(h + xxh32_read32(p) * XXH32_P3, 17) * XXH32_P4;
  for (; p < end; ++p) h = xxh32_rotl(h + (unsigned int)(*p) * XXH32_P5, 11) * XXH32_P1;
  h ^= h >> 15;
  h *= XXH32_P2;
  h ^= h >> 13;
  h *= XXH32_P3;
  h ^= h >> 16;
  return h;
}
