// Message loads and digest stores for the SHA-256 kernels: big-endian words from bytes with the
// widest load the alignment allows, and digests back to bytes. NVRTC, nvcc and host compilers.
#ifndef OPKIT_SHA256_IO_CUH
#define OPKIT_SHA256_IO_CUH

#include "sha256_core.cuh"

struct alignas(16) sha256_vec4 {
  unsigned int x, y, z, w;
};
struct alignas(8) sha256_vec2 {
  unsigned int x, y;
};

// On the GPU a cast pointer load is the way to get LDG.32/64/128. A host compiler gets memcpy,
// which it turns into the same load without breaking strict aliasing.
template <class T>
SHA256_FN T sha256_load(const unsigned char* p) {
#ifdef __CUDA_ARCH__
  return *reinterpret_cast<const T*>(p);
#else
  T value;
  __builtin_memcpy(&value, p, sizeof(T));
  return value;
#endif
}
template <class T>
SHA256_FN void sha256_store(unsigned char* p, const T& value) {
#ifdef __CUDA_ARCH__
  *reinterpret_cast<T*>(p) = value;
#else
  __builtin_memcpy(p, &value, sizeof(T));
#endif
}

// The big-endian word at p from single bytes (any alignment).
SHA256_FN unsigned int sha256_load_be_bytes(const unsigned char* p) {
  return (static_cast<unsigned int>(p[0]) << 24) | (static_cast<unsigned int>(p[1]) << 16) |
         (static_cast<unsigned int>(p[2]) << 8) | static_cast<unsigned int>(p[3]);
}

// Message words w[j..j+n) (n = 1, 2 or 4) from p, which is aligned to `align` bytes.
SHA256_FN void sha256_load_words(unsigned int* w, const unsigned char* p, int n, int align) {
  if (n == 4 && align >= 16) {
    sha256_vec4 v = sha256_load<sha256_vec4>(p);
    w[0] = sha256_bswap(v.x);
    w[1] = sha256_bswap(v.y);
    w[2] = sha256_bswap(v.z);
    w[3] = sha256_bswap(v.w);
  } else if (n >= 2 && align >= 8) {
    for (int i = 0; i < n; i += 2) {
      sha256_vec2 v = sha256_load<sha256_vec2>(p + 4 * i);
      w[i] = sha256_bswap(v.x);
      w[i + 1] = sha256_bswap(v.y);
    }
  } else if (align >= 4) {
    for (int i = 0; i < n; ++i) w[i] = sha256_bswap(sha256_load<unsigned int>(p + 4 * i));
  } else {
    for (int i = 0; i < n; ++i) w[i] = sha256_load_be_bytes(p + 4 * i);
  }
}

// __byte_perm(lo, hi, selector) with CUDA's semantics (no sign-replicate mode): byte k of the
// result is byte (selector >> 4k) & 7 of the 8-byte value hi:lo.
SHA256_FN unsigned int sha256_byte_perm(unsigned int lo, unsigned int hi, unsigned int selector) {
#ifdef __CUDA_ARCH__
  return __byte_perm(lo, hi, selector);
#else
  const unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
  unsigned int r = 0;
  for (int k = 0; k < 4; ++k)
    r |= static_cast<unsigned int>((both >> (8u * ((selector >> (4 * k)) & 7u))) & 0xffu) << (8 * k);
  return r;
#endif
}

// The big-endian word at p, for any alignment, reading only bytes in [begin, end) (which holds
// [p, p + 4)): two aligned loads and one byte permute where those words lie inside the range,
// single bytes at its edges.
SHA256_FN unsigned int sha256_load_be_unaligned(const unsigned char* p, const unsigned char* begin,
                                                const unsigned char* end) {
  const unsigned long long address = reinterpret_cast<unsigned long long>(p);
  const unsigned char* aligned = p - (address & 3u);
  const unsigned int shift = static_cast<unsigned int>(address & 3u);
  if (shift == 0u) return sha256_bswap(sha256_load<unsigned int>(p));
  if (aligned < begin || aligned + 8 > end) return sha256_load_be_bytes(p);
  const unsigned int lo = sha256_load<unsigned int>(aligned);
  const unsigned int hi = sha256_load<unsigned int>(aligned + 4);
  // Result bytes, least significant first: message bytes shift+3, shift+2, shift+1, shift.
  return sha256_byte_perm(lo, hi, (shift + 3u) | ((shift + 2u) << 4) | ((shift + 1u) << 8) | (shift << 12));
}

// The 16 big-endian words of the 64 bytes at p, any alignment, reading only bytes in
// [begin, end) (which holds [p, p + 64)). One branch per block rather than per word.
SHA256_FN void sha256_load_block_unaligned(unsigned int w[16], const unsigned char* p, const unsigned char* begin,
                                           const unsigned char* end) {
  const unsigned long long address = reinterpret_cast<unsigned long long>(p);
  const unsigned int shift = static_cast<unsigned int>(address & 3u);
  const unsigned char* aligned = p - shift;
  if (shift == 0u) {
    for (int j = 0; j < 16; ++j) w[j] = sha256_bswap(sha256_load<unsigned int>(p + 4 * j));
  } else if (aligned >= begin && aligned + 68 <= end) {
    const unsigned int selector = (shift + 3u) | ((shift + 2u) << 4) | ((shift + 1u) << 8) | (shift << 12);
    unsigned int lo = sha256_load<unsigned int>(aligned);
    for (int j = 0; j < 16; ++j) {
      const unsigned int hi = sha256_load<unsigned int>(aligned + 4 * (j + 1));
      w[j] = sha256_byte_perm(lo, hi, selector);
      lo = hi;
    }
  } else {
    for (int j = 0; j < 16; ++j) w[j] = sha256_load_be_unaligned(p + 4 * j, begin, end);
  }
}

// The word at message byte p of a message of len bytes, padding included: data bytes, then 0x80,
// then zeros (the length words are the caller's). p + 4 > len here, so only bytes below len load.
SHA256_FN unsigned int sha256_tail_word(const unsigned char* m, unsigned long long p, unsigned long long len) {
  unsigned int word = 0;
  for (int k = 0; k < 4; ++k) {
    unsigned long long q = p + static_cast<unsigned long long>(k);
    unsigned int byte = q < len ? static_cast<unsigned int>(m[q]) : (q == len ? 0x80u : 0u);
    word |= byte << (24 - 8 * k);
  }
  return word;
}

// Stores a digest (8 state words) as 32 bytes at out, aligned to `align` bytes.
SHA256_FN void sha256_store_digest(unsigned char* out, const unsigned int s[8], int align) {
  if (align >= 16) {
    sha256_vec4 a = {sha256_bswap(s[0]), sha256_bswap(s[1]), sha256_bswap(s[2]), sha256_bswap(s[3])};
    sha256_vec4 b = {sha256_bswap(s[4]), sha256_bswap(s[5]), sha256_bswap(s[6]), sha256_bswap(s[7])};
    sha256_store(out, a);
    sha256_store(out + 16, b);
  } else if (align >= 4) {
    for (int i = 0; i < 8; ++i) sha256_store(out + 4 * i, sha256_bswap(s[i]));
  } else {
    for (int i = 0; i < 8; ++i) {
      out[4 * i] = static_cast<unsigned char>(s[i] >> 24);
      out[4 * i + 1] = static_cast<unsigned char>(s[i] >> 16);
      out[4 * i + 2] = static_cast<unsigned char>(s[i] >> 8);
      out[4 * i + 3] = static_cast<unsigned char>(s[i]);
    }
  }
}

// SHA-256 of a 32-byte message given as 8 big-endian words (the second hash of sha256d):
// one block whose padding words are constants.
SHA256_FN void sha256_of_32(const unsigned int m[8], unsigned int out[8]) {
  unsigned int w[16];
  for (int i = 0; i < 8; ++i) w[i] = m[i];
  w[8] = 0x80000000u;
  for (int i = 9; i < 15; ++i) w[i] = 0u;
  w[15] = 256u;
  sha256_compress_first<0xff00u>(out, w);  // words 8..15 are padding
}

#endif  // OPKIT_SHA256_IO_CUH
