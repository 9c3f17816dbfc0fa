/* opkit's stand-in for <string.h> under NVRTC. memcpy and memset are NVRTC built-ins already;
   these add the other small helpers kernels use, as device functions. */
#ifndef OPKIT_JIT_STRING_H
#define OPKIT_JIT_STRING_H
#include <stddef.h>
static __device__ __forceinline__ int memcmp(const void* a, const void* b, size_t n) {
  const unsigned char* x = (const unsigned char*)a;
  const unsigned char* y = (const unsigned char*)b;
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}
static __device__ __forceinline__ size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n] != 0) ++n;
  return n;
}
#endif
