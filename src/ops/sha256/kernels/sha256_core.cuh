// SHA-256 (FIPS 180-4) compression for the batch kernels (sha256_fixed.cu, sha256_var.cu) and the
// host (sha256_compress.cpp), built from sha256_primitives.cuh. Written for messages whose length
// is known when the kernel is compiled: template flags say which message words are compile-time
// constants (padding, the length), so that sums with them fold or become VIADDs, and the first
// block starts from the constant H(0). (The mining kernels use the same primitives through their
// own partial evaluator, pow_sha256.cuh, since a job fixes most of their message instead.)
//
// Variant switch (-D), measured by bench/sha256_bench.cpp, beside SHA256_ADD_ON_FMA:
//   SHA256_K_ON_FMA    1 (default): h + W[t] as IMAD, then + K[t] as VIADD; 0: h + K[t] + W[t]
//                      as one IADD3 (one ALU instruction per round instead of two FMA ones)
// (Measured and deleted: a constant h or W[t] added in T1's IADD3 instead of a VIADD; slower.)
#ifndef OPKIT_SHA256_CORE_CUH
#define OPKIT_SHA256_CORE_CUH

#include "sha256_primitives.cuh"

// Full unrolling of a loop with a constant trip count, in each compiler's spelling (a host
// compiler warns about a `#pragma unroll` it does not know).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__) || defined(__clang__)
#define SHA256_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define SHA256_UNROLL _Pragma("GCC unroll 64")
#else
#define SHA256_UNROLL
#endif

#ifndef SHA256_K_ON_FMA
#define SHA256_K_ON_FMA 1
#endif

SHA256_FN void sha256_init(unsigned int state[8]) {
  state[0] = SHA256_H0;
  state[1] = SHA256_H1;
  state[2] = SHA256_H2;
  state[3] = SHA256_H3;
  state[4] = SHA256_H4;
  state[5] = SHA256_H5;
  state[6] = SHA256_H6;
  state[7] = SHA256_H7;
}

// x + c for a compile-time constant c: a plain `+` (VIADD, or folded into an IADD3), never
// sha256_add: an IMAD with an immediate operand would pull `one` into a vector register (see
// sha256_primitives.cuh).
SHA256_FN unsigned int sha256_add_const(unsigned int x, unsigned int c) {
  return x + c;
}

// a + b, where kA / kB say that a / b is a compile-time constant.
template <bool kA, bool kB>
SHA256_FN unsigned int sha256_add_known(unsigned int a, unsigned int b) {
  if constexpr (kA && kB)
    return a + b;
  else if constexpr (kA)
    return sha256_add_const(b, a);
  else if constexpr (kB)
    return sha256_add_const(a, b);
  else
    return sha256_add(a, b);
}

// Which words of a block's 64-word message schedule are compile-time constants (bit t for W[t]),
// given which of its 16 message words are (bit j for W[j]): W[t] is when its four inputs are.
constexpr unsigned long long sha256_known_schedule(unsigned int known_words) {
  unsigned long long known = known_words & 0xffffu;
  for (int t = 16; t < 64; ++t) {
    const unsigned long long inputs = (1ull << (t - 16)) | (1ull << (t - 15)) | (1ull << (t - 7)) | (1ull << (t - 2));
    if ((known & inputs) == inputs) known |= 1ull << t;
  }
  return known;
}

// Message-schedule step for word kT: W[kT] = σ1(W[kT-2]) + W[kT-7] + σ0(W[kT-15]) + W[kT-16], in
// place in a 16-word ring (w16 holds W[kT-16] on entry and W[kT] on exit). kKnown is
// sha256_known_schedule(): sums with a constant are plain.
template <unsigned long long kKnown, int kT>
SHA256_FN void sha256_schedule(unsigned int& w16, unsigned int w15, unsigned int w7, unsigned int w2) {
  constexpr bool k16 = ((kKnown >> (kT - 16)) & 1u) != 0, k15 = ((kKnown >> (kT - 15)) & 1u) != 0;
  constexpr bool k7 = ((kKnown >> (kT - 7)) & 1u) != 0, k2 = ((kKnown >> (kT - 2)) & 1u) != 0;
  const unsigned int low = sha256_add_known<k16, k15>(w16, sha256_small_sigma0(w15));
  const unsigned int high = sha256_add_known<k7, k2>(w7, sha256_small_sigma1(w2));
  constexpr bool low_known = k16 && k15, high_known = k7 && k2;
  w16 = sha256_add_known<low_known, high_known>(low, high);
}

// Expands the ring w[0..15] from W[kT-16..kT-1] to W[kT..kT+15].
template <unsigned long long kKnown, int kT>
SHA256_FN void sha256_expand(unsigned int w[16]) {
  sha256_schedule<kKnown, kT + 0>(w[0], w[1], w[9], w[14]);
  sha256_schedule<kKnown, kT + 1>(w[1], w[2], w[10], w[15]);
  sha256_schedule<kKnown, kT + 2>(w[2], w[3], w[11], w[0]);
  sha256_schedule<kKnown, kT + 3>(w[3], w[4], w[12], w[1]);
  sha256_schedule<kKnown, kT + 4>(w[4], w[5], w[13], w[2]);
  sha256_schedule<kKnown, kT + 5>(w[5], w[6], w[14], w[3]);
  sha256_schedule<kKnown, kT + 6>(w[6], w[7], w[15], w[4]);
  sha256_schedule<kKnown, kT + 7>(w[7], w[8], w[0], w[5]);
  sha256_schedule<kKnown, kT + 8>(w[8], w[9], w[1], w[6]);
  sha256_schedule<kKnown, kT + 9>(w[9], w[10], w[2], w[7]);
  sha256_schedule<kKnown, kT + 10>(w[10], w[11], w[3], w[8]);
  sha256_schedule<kKnown, kT + 11>(w[11], w[12], w[4], w[9]);
  sha256_schedule<kKnown, kT + 12>(w[12], w[13], w[5], w[10]);
  sha256_schedule<kKnown, kT + 13>(w[13], w[14], w[6], w[11]);
  sha256_schedule<kKnown, kT + 14>(w[14], w[15], w[7], w[12]);
  sha256_schedule<kKnown, kT + 15>(w[15], w[0], w[8], w[13]);
}

// T1 = h + K[t] + W[t] + Σ1(e) + Ch(e, f, g), where kH / kW say that h / W[t] is a compile-time
// constant. h + K[t] + W[t] comes first (off the critical path through e), then two IMADs: it is
// an IMAD and a VIADD (SHA256_K_ON_FMA), one IADD3 otherwise, and one VIADD where h or W[t] is
// constant.
template <bool kH, bool kW>
SHA256_FN unsigned int sha256_t1(unsigned int h, unsigned int k, unsigned int w, unsigned int sigma1, unsigned int ch) {
  if constexpr (kH && kW)
    return h + k + w + sigma1 + ch;  // one IADD3 of the constant, Σ1 and Ch
  else if constexpr (SHA256_K_ON_FMA && !kH && !kW)
    return sha256_add(sha256_add(sha256_add_const(sha256_add(h, w), k), sigma1), ch);
  else
    return sha256_add(sha256_add(h + k + w, sigma1), ch);
}

// One round, t, on message word w. The caller rotates the names of the working variables instead
// of moving values: round t+1 passes (h, a, b, c, d, e, f, g). kH, kW and kD say that h, w and d
// are compile-time constants (the first rounds of a message, padding words), so that sums with
// them go through sha256_add_const.
#define SHA256_ROUND_KNOWN(a, b, c, d, e, f, g, h, t, w, kH, kW, kD)                                         \
  do {                                                                                                       \
    const unsigned int t1_ = sha256_t1<kH, kW>(h, sha256_k(t), w, sha256_big_sigma1(e), sha256_ch(e, f, g)); \
    d = sha256_add_known<kD, false>(d, t1_);                                                                 \
    h = sha256_add(t1_, sha256_add(sha256_big_sigma0(a), sha256_maj(a, b, c)));                              \
  } while (0)
// A round with h and d varying; bit t of the compile-time mask kKnown says that W[t] is a constant
// (a padding word), so that no IMAD adds it (see SHA256_K_ON_FMA).
#define SHA256_ROUND(a, b, c, d, e, f, g, h, t, w, kKnown) \
  SHA256_ROUND_KNOWN(a, b, c, d, e, f, g, h, t, w, false, (((kKnown) >> (t)) & 1u) != 0, false)

// Eight rounds starting at round t (a multiple of 8) on message words w[t % 16 ...]; kKnown as
// for SHA256_ROUND.
#define SHA256_EIGHT_ROUNDS(s, t, w, kKnown)                                             \
  do {                                                                                   \
    SHA256_ROUND(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], (t) + 0, w[0], kKnown); \
    SHA256_ROUND(s[7], s[0], s[1], s[2], s[3], s[4], s[5], s[6], (t) + 1, w[1], kKnown); \
    SHA256_ROUND(s[6], s[7], s[0], s[1], s[2], s[3], s[4], s[5], (t) + 2, w[2], kKnown); \
    SHA256_ROUND(s[5], s[6], s[7], s[0], s[1], s[2], s[3], s[4], (t) + 3, w[3], kKnown); \
    SHA256_ROUND(s[4], s[5], s[6], s[7], s[0], s[1], s[2], s[3], (t) + 4, w[4], kKnown); \
    SHA256_ROUND(s[3], s[4], s[5], s[6], s[7], s[0], s[1], s[2], (t) + 5, w[5], kKnown); \
    SHA256_ROUND(s[2], s[3], s[4], s[5], s[6], s[7], s[0], s[1], (t) + 6, w[6], kKnown); \
    SHA256_ROUND(s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[0], (t) + 7, w[7], kKnown); \
  } while (0)

// Rounds 16..63 of one block, schedule included; kKnownWords as for sha256_compress. w holds
// W[0..15] on entry and W[48..63] on return.
template <unsigned int kKnownWords>
SHA256_FN void sha256_rounds_16_to_63(unsigned int s[8], unsigned int w[16]) {
  constexpr unsigned long long known = sha256_known_schedule(kKnownWords);
  sha256_expand<known, 16>(w);
  SHA256_EIGHT_ROUNDS(s, 16, w, known);
  SHA256_EIGHT_ROUNDS(s, 24, (w + 8), known);
  sha256_expand<known, 32>(w);
  SHA256_EIGHT_ROUNDS(s, 32, w, known);
  SHA256_EIGHT_ROUNDS(s, 40, (w + 8), known);
  sha256_expand<known, 48>(w);
  SHA256_EIGHT_ROUNDS(s, 48, w, known);
  SHA256_EIGHT_ROUNDS(s, 56, (w + 8), known);
}

// Compresses one 64-byte block, given as 16 big-endian words, into state. Bit j of kKnownWords
// says that w[j] is a compile-time constant (padding), so that sums with it fold. w is used as
// the schedule ring and holds W[48..63] on return.
template <unsigned int kKnownWords = 0>
SHA256_FN void sha256_compress(unsigned int state[8], unsigned int w[16]) {
  unsigned int s[8];
  for (int i = 0; i < 8; ++i) s[i] = state[i];
  SHA256_EIGHT_ROUNDS(s, 0, w, kKnownWords);
  SHA256_EIGHT_ROUNDS(s, 8, (w + 8), kKnownWords);
  sha256_rounds_16_to_63<kKnownWords>(s, w);
  for (int i = 0; i < 8; ++i) state[i] = sha256_add(state[i], s[i]);
}

// Round 0 on the initial state: everything but W[0] is constant, so the new a and e are W[0] plus
// a constant each. kW0 says that W[0] is a constant too.
template <bool kW0>
SHA256_FN void sha256_round0(unsigned int s[8], unsigned int w0) {
  const unsigned int t1 =
      SHA256_H7 + sha256_k(0) + sha256_big_sigma1(SHA256_H4) + sha256_ch(SHA256_H4, SHA256_H5, SHA256_H6);
  const unsigned int t2 = sha256_big_sigma0(SHA256_H0) + sha256_maj(SHA256_H0, SHA256_H1, SHA256_H2);
  s[3] = sha256_add_known<kW0, true>(w0, SHA256_H3 + t1);
  s[7] = sha256_add_known<kW0, true>(w0, t1 + t2);
}

// sha256_init then sha256_compress, for a message's first block. The initial state is constant:
// round 0 is W[0] plus constants, rounds 1..3 add a constant h and d, and the final sums add H(0).
template <unsigned int kKnownWords = 0>
SHA256_FN void sha256_compress_first(unsigned int state[8], unsigned int w[16]) {
  constexpr bool k1 = (kKnownWords & 2u) != 0, k2 = (kKnownWords & 4u) != 0, k3 = (kKnownWords & 8u) != 0;
  unsigned int s[8];
  sha256_init(s);
  sha256_round0<(kKnownWords & 1u) != 0>(s, w[0]);
  SHA256_ROUND_KNOWN(s[7], s[0], s[1], s[2], s[3], s[4], s[5], s[6], 1, w[1], true, k1, true);
  SHA256_ROUND_KNOWN(s[6], s[7], s[0], s[1], s[2], s[3], s[4], s[5], 2, w[2], true, k2, true);
  SHA256_ROUND_KNOWN(s[5], s[6], s[7], s[0], s[1], s[2], s[3], s[4], 3, w[3], true, k3, true);
  SHA256_ROUND(s[4], s[5], s[6], s[7], s[0], s[1], s[2], s[3], 4, w[4], kKnownWords);
  SHA256_ROUND(s[3], s[4], s[5], s[6], s[7], s[0], s[1], s[2], 5, w[5], kKnownWords);
  SHA256_ROUND(s[2], s[3], s[4], s[5], s[6], s[7], s[0], s[1], 6, w[6], kKnownWords);
  SHA256_ROUND(s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[0], 7, w[7], kKnownWords);
  SHA256_EIGHT_ROUNDS(s, 8, (w + 8), kKnownWords);
  sha256_rounds_16_to_63<kKnownWords>(s, w);
  state[0] = sha256_add_const(s[0], SHA256_H0);
  state[1] = sha256_add_const(s[1], SHA256_H1);
  state[2] = sha256_add_const(s[2], SHA256_H2);
  state[3] = sha256_add_const(s[3], SHA256_H3);
  state[4] = sha256_add_const(s[4], SHA256_H4);
  state[5] = sha256_add_const(s[5], SHA256_H5);
  state[6] = sha256_add_const(s[6], SHA256_H6);
  state[7] = sha256_add_const(s[7], SHA256_H7);
}

#endif  // OPKIT_SHA256_CORE_CUH
