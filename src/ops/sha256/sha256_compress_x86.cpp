// SHA-256 compression with the x86 SHA extensions (SHA-NI: SHA256RNDS2 does two rounds,
// SHA256MSG1/2 the schedule), compiled for that target only and chosen at run time by CPUID.
// The instruction sequence follows Intel's published reference (public domain).
#include <cstdint>

#include "sha256_compress.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

#include "kernels/sha256_primitives.cuh"

namespace opkit::ops::detail {

bool sha_ni_available() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool sha = (ebx >> 29) & 1u;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool sse41 = (ecx >> 19) & 1u, ssse3 = (ecx >> 9) & 1u;
  return sha && sse41 && ssse3;
}

namespace {

#define OPKIT_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// Four rounds on msg (W[t..t+3] + K[t..t+3] added in k4).
OPKIT_SHA_TARGET inline void four_rounds(__m128i& state0, __m128i& state1, __m128i msg, __m128i k4) {
  __m128i m = _mm_add_epi32(msg, k4);
  state1 = _mm_sha256rnds2_epu32(state1, state0, m);
  m = _mm_shuffle_epi32(m, 0x0E);
  state0 = _mm_sha256rnds2_epu32(state0, state1, m);
}

// W[t..t+3] from the four previous message vectors: m0 = W[t-16..], m1 = W[t-12..],
// m2 = W[t-8..], m3 = W[t-4..].
OPKIT_SHA_TARGET inline __m128i next_message(__m128i m0, __m128i m1, __m128i m2, __m128i m3) {
  __m128i t = _mm_sha256msg1_epu32(m0, m1);
  t = _mm_add_epi32(t, _mm_alignr_epi8(m3, m2, 4));
  return _mm_sha256msg2_epu32(t, m3);
}

// K (from the kernels' primitives) as the 16-byte aligned table the rounds load four at a time.
struct RoundConstants {
  alignas(16) std::uint32_t k[64];
};
constexpr RoundConstants make_round_constants() {
  RoundConstants r{};
  for (int i = 0; i < 64; ++i) r.k[i] = sha256_k(i);
  return r;
}
constexpr RoundConstants round_constants = make_round_constants();

}  // namespace

OPKIT_SHA_TARGET void sha256_compress_sha_ni(std::uint32_t state[8], const std::uint8_t block[64]) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  // The rounds instruction wants the state as (A, B, E, F) and (C, D, G, H).
  __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[0]));     // D C B A
  __m128i state1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&state[4]));  // H G F E
  tmp = _mm_shuffle_epi32(tmp, 0xB1);                                             // C D A B
  state1 = _mm_shuffle_epi32(state1, 0x1B);                                       // E F G H
  __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);                               // A B E F
  state1 = _mm_blend_epi16(state1, tmp, 0xF0);                                    // C D G H
  const __m128i abef_save = state0, cdgh_save = state1;

  __m128i m[4];
  for (int i = 0; i < 4; ++i)
    m[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * i)), byte_swap);
  const auto* k = reinterpret_cast<const __m128i*>(round_constants.k);
  for (int i = 0; i < 4; ++i) four_rounds(state0, state1, m[i], _mm_load_si128(k + i));
  for (int t = 4; t < 16; ++t) {
    const __m128i w = next_message(m[t & 3], m[(t + 1) & 3], m[(t + 2) & 3], m[(t + 3) & 3]);
    m[t & 3] = w;
    four_rounds(state0, state1, w, _mm_load_si128(k + t));
  }

  state0 = _mm_add_epi32(state0, abef_save);
  state1 = _mm_add_epi32(state1, cdgh_save);
  tmp = _mm_shuffle_epi32(state0, 0x1B);        // F E B A
  state1 = _mm_shuffle_epi32(state1, 0xB1);     // D C H G
  state0 = _mm_blend_epi16(tmp, state1, 0xF0);  // D C B A
  state1 = _mm_alignr_epi8(state1, tmp, 8);     // H G F E
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), state0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), state1);
}

}  // namespace opkit::ops::detail

#else  // not x86: SHA-NI never exists

namespace opkit::ops::detail {
bool sha_ni_available() {
  return false;
}
void sha256_compress_sha_ni(std::uint32_t state[8], const std::uint8_t block[64]) {
  sha256_compress_portable(state, block);
}
}  // namespace opkit::ops::detail

#endif
