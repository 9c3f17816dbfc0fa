// Bitcoin proof of work: for each nonce in [first, first + count), sha256d(header with that nonce)
// and a quick test of its top 32 bits against a threshold (the target's top word); every offset
// that passes is reported (pow_report), and the host checks each one's whole 256-bit hash.
//
// The default, generic kernel (-DPOW_GENERIC) takes the job as its `job` argument, one program
// for every job: a new header costs no compile. The host precomputes what does not depend on the
// nonce: the midstate of the header's first 64 bytes and the state after rounds 0..2 of the
// second block (they read only header words 16..18), so the kernel starts at round 3, the first
// to read the nonce. The job words are `pow_uniform` (pow_sha256.cuh): what is computed from them
// alone (round 3's other terms, the constant schedule words) stays in uniform registers and joins
// the varying sums as VIADD operands, as the specialised kernel's immediates do. Treated as
// varying, they were IMAD operands, which moved `one` into a vector register: three register reads
// for every IMAD, 4,603 register-bank cycles per nonce against 3,352, and 7.03 GH/s against the
// specialised kernel's 8.50 on the H200 (docs/perf-pow.md).
//
// Without POW_GENERIC the kernel is specialised per job with -D: POW_MID0..7 (the midstate),
// POW_W0..2 (header words 16..18: merkle-root tail, time, nBits), POW_TARGET_TOP (the quick
// test's threshold). Then the first three rounds, the constant schedule words and the padding
// fold away at compile time (pow_sha256.cuh). It costs a compile per job (seconds) for the same
// ALU-pipe count per nonce (docs/perf-pow.md), so the library uses it only when asked.
#include "pow_sha256.cuh"

// Rounds of the header's second block that read only header words 16..18, not the nonce (word 19).
#define POW_NONCE_FREE_ROUNDS 3

struct PowBitcoinJob {
  pow_u32 midstate[8];  // after the header's first 64 bytes
  pow_u32 state3[8];    // a..h after rounds 0..2 of the second block, from the midstate
  pow_u32 tail[3];      // header words 16..18
  pow_u32 target_top;   // the quick test's threshold for the hash's top 32 bits
};

#ifdef POW_GENERIC
#define POW_MID(i) pow_uniform(job.midstate[i])
#define POW_TAIL(i) pow_uniform(job.tail[i])
#define POW_TOP job.target_top
#define POW_FIRST_ROUND POW_NONCE_FREE_ROUNDS
#else
#define POW_MID(i) pow_known(pow_mid_word(i))
#define POW_TAIL(i) pow_known(pow_tail_word(i))
#define POW_TOP POW_TARGET_TOP
#define POW_FIRST_ROUND 0
// clang-format off
POW_FN pow_u32 pow_tail_word(int i) {
  switch (i) {
    case 0: return POW_W0;
    case 1: return POW_W1;
    default: return POW_W2;
  }
}
// clang-format on
#endif

// found: the launch's candidate buffer (pow_report), `slots` entries after its two counters.
// Thread t tests offsets t, t + stride, ... (count + stride < 2^32, by the host).
extern "C" __global__ void POW_BOUNDS pow_bitcoin(pow_u32* found, pow_u32 slots, PowBitcoinJob job, pow_u32 first,
                                                  pow_u32 count, pow_u32 per_thread) {
  (void)job;
  const pow_u32 stride = gridDim.x * blockDim.x;
  pow_u32 offset = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 1
  for (pow_u32 k = 0; k < per_thread && offset < count; ++k, offset += stride) {
    // First hash, second block: header bytes 64..79 and the padding of an 80-byte message.
    PowWord w[16];
    w[0] = POW_TAIL(0);
    w[1] = POW_TAIL(1);
    w[2] = POW_TAIL(2);
    w[3] = pow_varying(sha256_bswap(first + offset));
    w[4] = pow_known(0x80000000u);
#pragma unroll
    for (int i = 5; i < 15; ++i) w[i] = pow_known(0u);
    w[15] = pow_known(640u);
    PowWord state[8], s[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      state[i] = POW_MID(i);
#ifdef POW_GENERIC
      s[i] = pow_uniform(job.state3[i]);
#else
      s[i] = state[i];
#endif
    }
    pow_compress_rounds(s, w, 64, POW_FIRST_ROUND);
#pragma unroll
    for (int i = 0; i < 8; ++i) state[i] = state[i] + s[i];

    // Second hash: the 32-byte digest and its padding, from the initial hash value. Only word 7
    // of the result is tested here: it is IV7 + e after 61 rounds, so rounds 61..63 and the parts
    // of rounds 58..60 that only feed them are never computed.
    PowWord w2[16];
#pragma unroll
    for (int i = 0; i < 8; ++i) w2[i] = state[i];
    w2[8] = pow_known(0x80000000u);
#pragma unroll
    for (int i = 9; i < 15; ++i) w2[i] = pow_known(0u);
    w2[15] = pow_known(256u);
    PowWord s2[8] = {pow_known(SHA256_H0), pow_known(SHA256_H1), pow_known(SHA256_H2), pow_known(SHA256_H3),
                     pow_known(SHA256_H4), pow_known(SHA256_H5), pow_known(SHA256_H6), pow_known(SHA256_H7)};
    pow_compress_rounds(s2, w2, 61);

    // Explorer order reads the digest backwards, so its top 32 bits are bswap(H7).
    const pow_u32 e61 = s2[4].v;
    bool candidate;
#if !defined(POW_GENERIC) && POW_TARGET_TOP == 0
    candidate = e61 == 0u - SHA256_H7;
#else
    candidate = sha256_bswap(e61 + SHA256_H7) <= POW_TOP;
#endif
    if (candidate) pow_report(found, slots, offset);
  }
}
