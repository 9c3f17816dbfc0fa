// SHA-256 for the mining kernels, written as a partial evaluator over sha256_primitives.cuh:
// every word carries a flag saying whether its value is known when the kernel is compiled (a -D
// job constant, a padding word, K).
//
// Why: a mining job fixes most of the message (midstate, the header words around the nonce, the
// padding), and the kernel is compiled per job. Known words fold away at compile time (the first
// rounds, constant schedule words, K + W), and only what depends on the nonce is left. The flags
// are compile-time constants after inlining and unrolling, so every `if (x.known)` below vanishes,
// and NVVM removes work whose result is never used. Additions follow the primitives' rule: varying terms by IMAD
// (sha256_add), a sum's constant part by a plain `+` (VIADD). On a host compiler (the CPU
// backend) the same code is plain C++.
#ifndef OPKIT_POW_SHA256_CUH
#define OPKIT_POW_SHA256_CUH

// Rotates as shifts: the partial evaluator's SASS is smallest so (see sha256_rotr).
#define SHA256_ROTR_AS_SHIFTS 1
#include "sha256_primitives.cuh"

#define POW_FN SHA256_FN

// -DPOW_MIN_BLOCKS=N caps registers so that N blocks of 256 threads fit on an SM: more warps to
// hide latency (the host launches blocks of 256; ptxas spills if the cap is too tight).
#ifdef POW_MIN_BLOCKS
#define POW_BOUNDS __launch_bounds__(256, POW_MIN_BLOCKS)
#else
#define POW_BOUNDS
#endif

typedef unsigned int pow_u32;
typedef unsigned long long pow_u64;

// A 32-bit word, whether its value is known at compile time, and whether it is the same in every
// thread (uniform: known, or from the job's arguments; not the nonce).
struct PowWord {
  pow_u32 v;
  bool known;
  bool uniform;
};

POW_FN PowWord pow_known(pow_u32 v) {
  PowWord w = {v, true, true};
  return w;
}
POW_FN PowWord pow_varying(pow_u32 v) {
  PowWord w = {v, false, false};
  return w;
}
// A job word of the generic kernels: unknown to the compiler, the same for every nonce.
POW_FN PowWord pow_uniform(pow_u32 v) {
  PowWord w = {v, false, true};
  return w;
}

// Sums of words. The known terms fold into one constant at compile time; the varying ones are
// added with IMAD (FMA pipe) and the constant, when there is one, with a plain `+` right after the
// first varying term: ptxas emits VIADD, which sm_90 issues to the FMA pipe too (Nsight Compute on
// the H200), so no addition of a sum is left on the ALU pipe. Not an IMAD for the constant: an
// IMAD with an immediate operand makes ptxas hold `one` in a vector register instead of a uniform
// one, a third register read for every IMAD, and register-bank reads then bound the kernel
// (tools/sass_banks.py); -DPOW_CONST_ADD_ON_FMA restores that. -DPOW_CONST_IN_IADD3 joins the
// constant and the first two varying terms in one IADD3 (ALU pipe) instead, the formulation of
// the second session.
// (Scalars, not an array of terms: NVRTC took three times as long on the array form.)
struct PowSum {
  pow_u32 known;  // the constant part, folded, plus the uniform terms
  pow_u32 sum;    // the varying part so far
  int varying;    // varying terms added
  bool known_added;
  bool uniform;   // uniform terms were added to `known`
};
POW_FN PowSum pow_sum_begin(pow_u32 known) {
  PowSum s = {known, 0u, 0, known == 0u, false};
  return s;
}
POW_FN pow_u32 pow_known_part(PowWord w) {
  return w.known ? w.v : 0u;
}
// Uniform terms join the constant part with plain adds (the uniform datapath), so the whole of it
// reaches the varying sum as one VIADD with a uniform-register operand. Added with sha256_add
// instead, each would be an IMAD whose uniform operand pushes `one` into a vector register: three
// register reads for every IMAD of the kernel.
POW_FN void pow_add_uniform(PowSum& s, PowWord w) {
  if (w.known || !w.uniform) return;
  s.known = s.uniform || !s.known_added ? s.known + w.v : w.v;
  s.uniform = true;
  s.known_added = false;
}
POW_FN void pow_add_varying(PowSum& s, PowWord w) {
  if (w.uniform) return;
  if (s.varying == 0) {
    s.sum = w.v;
#if !defined(POW_CONST_ADD_ON_FMA) && !defined(POW_CONST_IN_IADD3)
    if (!s.known_added) {
      s.sum = s.sum + s.known;  // VIADD
      s.known_added = true;
    }
#endif
#ifdef POW_CONST_IN_IADD3
  } else if (!s.known_added) {
    s.sum = s.sum + w.v + s.known;
    s.known_added = true;
#endif
  } else {
    s.sum = sha256_add(s.sum, w.v);
  }
  ++s.varying;
}
POW_FN PowWord pow_sum_end(PowSum s) {
  if (s.varying == 0) return s.uniform ? pow_uniform(s.known) : pow_known(s.known);
  if (!s.known_added) {
#ifdef POW_CONST_ADD_ON_FMA
    s.sum = sha256_add(s.sum, s.known);
#else
    s.sum = s.sum + s.known;
#endif
  }
  return pow_varying(s.sum);
}
POW_FN PowWord operator+(PowWord a, PowWord b) {
  PowSum s = pow_sum_begin(pow_known_part(a) + pow_known_part(b));
  pow_add_uniform(s, a);
  pow_add_uniform(s, b);
  pow_add_varying(s, a);
  pow_add_varying(s, b);
  return pow_sum_end(s);
}
POW_FN PowWord pow_sum(PowWord a, PowWord b, PowWord c) {
  PowSum s = pow_sum_begin(pow_known_part(a) + pow_known_part(b) + pow_known_part(c));
  pow_add_uniform(s, a);
  pow_add_uniform(s, b);
  pow_add_uniform(s, c);
  pow_add_varying(s, a);
  pow_add_varying(s, b);
  pow_add_varying(s, c);
  return pow_sum_end(s);
}
POW_FN PowWord pow_sum(PowWord a, PowWord b, PowWord c, PowWord d) {
  PowSum s = pow_sum_begin(pow_known_part(a) + pow_known_part(b) + pow_known_part(c) + pow_known_part(d));
  pow_add_uniform(s, a);
  pow_add_uniform(s, b);
  pow_add_uniform(s, c);
  pow_add_uniform(s, d);
  pow_add_varying(s, a);
  pow_add_varying(s, b);
  pow_add_varying(s, c);
  pow_add_varying(s, d);
  return pow_sum_end(s);
}
POW_FN PowWord pow_sum(PowWord a, PowWord b, PowWord c, PowWord d, PowWord e) {
  PowSum s =
      pow_sum_begin(pow_known_part(a) + pow_known_part(b) + pow_known_part(c) + pow_known_part(d) + pow_known_part(e));
  pow_add_uniform(s, a);
  pow_add_uniform(s, b);
  pow_add_uniform(s, c);
  pow_add_uniform(s, d);
  pow_add_uniform(s, e);
  pow_add_varying(s, a);
  pow_add_varying(s, b);
  pow_add_varying(s, c);
  pow_add_varying(s, d);
  pow_add_varying(s, e);
  return pow_sum_end(s);
}

// The functions of FIPS 180-4 §4.1.2 on words: known when their inputs are.
POW_FN PowWord pow_big_sigma0(PowWord x) {
  PowWord r = {sha256_big_sigma0(x.v), x.known, x.uniform};
  return r;
}
POW_FN PowWord pow_big_sigma1(PowWord x) {
  PowWord r = {sha256_big_sigma1(x.v), x.known, x.uniform};
  return r;
}
POW_FN PowWord pow_small_sigma0(PowWord x) {
  PowWord r = {sha256_small_sigma0(x.v), x.known, x.uniform};
  return r;
}
POW_FN PowWord pow_small_sigma1(PowWord x) {
  PowWord r = {sha256_small_sigma1(x.v), x.known, x.uniform};
  return r;
}
POW_FN PowWord pow_ch(PowWord x, PowWord y, PowWord z) {
  PowWord r = {sha256_ch(x.v, y.v, z.v), x.known && y.known && z.known, x.uniform && y.uniform && z.uniform};
  return r;
}
POW_FN PowWord pow_maj(PowWord x, PowWord y, PowWord z) {
  PowWord r = {sha256_maj(x.v, y.v, z.v), x.known && y.known && z.known, x.uniform && y.uniform && z.uniform};
  return r;
}

#ifdef POW_MID0
// Word i of a specialised job's midstate (the hash state after the message's whole leading
// blocks), compiled in with -DPOW_MID0..7 (define_midstate in kernel_programs.cpp).
// clang-format off
POW_FN pow_u32 pow_mid_word(int i) {
  switch (i) {
    case 0: return POW_MID0;
    case 1: return POW_MID1;
    case 2: return POW_MID2;
    case 3: return POW_MID3;
    case 4: return POW_MID4;
    case 5: return POW_MID5;
    case 6: return POW_MID6;
    default: return POW_MID7;
  }
}
// clang-format on
#endif

// Rounds [first, rounds) of one compression on state s (a..h) with message words w[0..15], which
// become the schedule ring. `rounds` < 64 stops early; the state then holds (a..h) after that many
// rounds. `first` > 0 starts from a state whose first rounds were done elsewhere (the host, for
// the generic Bitcoin kernel); the ring still starts as the message, which rounds < 16 only read.
// The caller adds the chaining value. Unused results are removed by the compiler, so a caller
// that reads only one word of the output pays only for what that word needs.
POW_FN void pow_compress_rounds(PowWord s[8], PowWord w[16], int rounds, int first = 0) {
#pragma unroll
  for (int t = 0; t < 64; ++t) {
    if (t < first) continue;
    if (t >= rounds) break;
    if (t >= 16) {
      w[t & 15] =
          pow_sum(pow_small_sigma1(w[(t - 2) & 15]), w[(t - 7) & 15], pow_small_sigma0(w[(t - 15) & 15]), w[t & 15]);
    }
    PowWord a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    PowWord t1 = pow_sum(h, pow_known(sha256_k(t)), w[t & 15], pow_big_sigma1(e), pow_ch(e, f, g));
    PowWord t2 = pow_big_sigma0(a) + pow_maj(a, b, c);
    s[7] = g;
    s[6] = f;
    s[5] = e;
    s[4] = d + t1;
    s[3] = c;
    s[2] = b;
    s[1] = a;
    s[0] = t1 + t2;
  }
}

// Candidates of one launch, in the buffer the host reads back: found[0] counts the offsets that
// passed the quick test, found[1] is the lowest of them (the host sets it to 0xffffffff), and
// found[2 .. 2 + slots) hold the first `slots` to arrive, in no order. So the host sees every
// candidate unless more than `slots` arrive, and even then the lowest.
POW_FN void pow_report(pow_u32* found, pow_u32 slots, pow_u32 offset) {
  atomicMin(found + 1, offset);
  const pow_u32 slot = atomicAdd(found, 1u);
  if (slot < slots) found[2 + slot] = offset;
}

// Full compression: state += rounds(state, w).
POW_FN void pow_compress(PowWord state[8], PowWord w[16]) {
  PowWord s[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) s[i] = state[i];
  pow_compress_rounds(s, w, 64);
#pragma unroll
  for (int i = 0; i < 8; ++i) state[i] = state[i] + s[i];
}

#endif  // OPKIT_POW_SHA256_CUH
