// Data-mode proof of work: for each nonce n in [first, first + count), sha256(STRING || decimal(n))
// and a quick test of its top 32 bits against a threshold (the target's top word); every offset
// that passes is reported (pow_report), and the host checks each one's whole hash.
//
// Compiled per job and per digit count (the host splits ranges at powers of ten), with -D:
//   POW_MID0..7       state after the STRING's whole 64-byte blocks
//   POW_PREFIX_LEN    bytes of STRING left over (0..63), at the start of the tail
//   POW_DIGITS        decimal digits of every nonce of the launch (1..20)
//   POW_BLOCKS        tail blocks (1, or 2 when prefix + digits + 9 padding bytes pass 64)
//   POW_TAIL0..31     the tail's words with each digit byte set to '0': prefix, padding, length
//   POW_TARGET_TOP    the quick test's threshold: the target's top 32 bits (the digest is read
//                     big-endian)
// Known words fold away (pow_sha256.cuh): the leading rounds over the prefix, the padding.
//
// With -DPOW_GENERIC the job comes from the `job` argument instead (the digit positions at run
// time, nothing folded): one program for every job and digit count, compiled once and then read
// from the disk cache, which mines on the GPU while the job's own kernel compiles.
#include "pow_sha256.cuh"

#ifdef POW_GENERIC

struct PowDataJob {
  pow_u32 midstate[8];
  pow_u32 tail[32];    // as POW_TAIL0..31 (the second 16 unused with one block)
  pow_u32 prefix_len;  // 0..63
  pow_u32 digits;      // 1..20
  pow_u32 blocks;      // 1 or 2
  pow_u32 target_top;  // the quick test's threshold
};

// As the specialised kernel below, the same launch contract.
extern "C" __global__ void pow_data(pow_u32* found, pow_u32 slots, PowDataJob job, pow_u64 first, pow_u32 count,
                                    pow_u32 per_thread) {
  const pow_u32 thread = blockIdx.x * blockDim.x + threadIdx.x;
  pow_u32 offset = thread * per_thread;
  if (offset >= count) return;
  const pow_u32 end = count - offset < per_thread ? count : offset + per_thread;

  // Decimal digits right-aligned in d[0..20): d[k] sits at tail byte `base + k`; the leading
  // 20 - digits entries are zero and not part of the message.
  pow_u32 d[20];
  pow_u64 n = first + offset;
#pragma unroll
  for (int k = 19; k >= 0; --k) {
    d[k] = (pow_u32)(n % 10u);
    n /= 10u;
  }
  const int lead = 20 - (int)job.digits;
  const int base = (int)job.prefix_len - lead;

#pragma unroll 1
  for (; offset < end; ++offset) {
    pow_u32 m[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) m[i] = job.tail[i];
#pragma unroll
    for (int k = 0; k < 20; ++k) {
      if (k >= lead) {
        const int byte = base + k;
        m[byte >> 2] += d[k] << (8 * (3 - (byte & 3)));
      }
    }
    PowWord state[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) state[i] = pow_varying(job.midstate[i]);
    PowWord w[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) w[i] = pow_varying(m[i]);
    if (job.blocks == 2u) {
      pow_compress(state, w);
#pragma unroll
      for (int i = 0; i < 16; ++i) w[i] = pow_varying(m[16 + i]);
    }
    PowWord s[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) s[i] = state[i];
    pow_compress_rounds(s, w, 64);
    if ((state[0] + s[0]).v <= job.target_top) pow_report(found, slots, offset);

    if (++d[19] == 10u) {
#pragma unroll
      for (int k = 19; k > 0; --k) {
        if (d[k] == 10u) {
          d[k] = 0u;
          ++d[k - 1];
        }
      }
    }
  }
}

#else  // the job's own kernel

#define POW_TAIL_WORDS (16 * POW_BLOCKS)

// clang-format off
POW_FN pow_u32 pow_tail_word(int i) {
  switch (i) {
    case 0: return POW_TAIL0;   case 1: return POW_TAIL1;   case 2: return POW_TAIL2;   case 3: return POW_TAIL3;
    case 4: return POW_TAIL4;   case 5: return POW_TAIL5;   case 6: return POW_TAIL6;   case 7: return POW_TAIL7;
    case 8: return POW_TAIL8;   case 9: return POW_TAIL9;   case 10: return POW_TAIL10; case 11: return POW_TAIL11;
    case 12: return POW_TAIL12; case 13: return POW_TAIL13; case 14: return POW_TAIL14; case 15: return POW_TAIL15;
#if POW_BLOCKS == 2
    case 16: return POW_TAIL16; case 17: return POW_TAIL17; case 18: return POW_TAIL18; case 19: return POW_TAIL19;
    case 20: return POW_TAIL20; case 21: return POW_TAIL21; case 22: return POW_TAIL22; case 23: return POW_TAIL23;
    case 24: return POW_TAIL24; case 25: return POW_TAIL25; case 26: return POW_TAIL26; case 27: return POW_TAIL27;
    case 28: return POW_TAIL28; case 29: return POW_TAIL29; case 30: return POW_TAIL30; case 31: return POW_TAIL31;
#endif
    default: return 0u;
  }
}
// clang-format on

// acc + digit * 2^shift on the FMA pipe (a shift-add by an immediate would become an ALU LEA).
POW_FN pow_u32 pow_place_digit(pow_u32 acc, pow_u32 digit, int shift) {
#ifdef __CUDA_ARCH__
  const pow_u32 m = sha256_one << shift;
  pow_u32 r;
  asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(digit), "r"(m), "r"(acc));
  return r;
#else
  return acc + (digit << shift);
#endif
}

// Tail word i with the digits d[0..POW_DIGITS) (most significant first) placed in it.
POW_FN PowWord pow_message_word(int i, const pow_u32 d[POW_DIGITS]) {
  const int first_byte = 4 * i, last_byte = 4 * i + 3;
  if (last_byte < POW_PREFIX_LEN || first_byte >= POW_PREFIX_LEN + POW_DIGITS) return pow_known(pow_tail_word(i));
  pow_u32 acc = pow_tail_word(i);
#pragma unroll
  for (int k = 0; k < POW_DIGITS; ++k) {
    const int byte = POW_PREFIX_LEN + k;
    if (byte >= first_byte && byte <= last_byte) acc = pow_place_digit(acc, d[k], 8 * (3 - (byte - first_byte)));
  }
  return pow_varying(acc);
}

// found: the launch's candidate buffer (pow_report), `slots` entries after its two counters.
// Thread t tests the run of offsets [t * per_thread, (t + 1) * per_thread); the host
// keeps the whole launch under 2^32 offsets and makes per_thread a multiple of 10, so the digit
// carries of all threads of a warp fall on the same iterations.
extern "C" __global__ void POW_BOUNDS pow_data(pow_u32* found, pow_u32 slots, pow_u64 first, pow_u32 count,
                                               pow_u32 per_thread) {
  const pow_u32 thread = blockIdx.x * blockDim.x + threadIdx.x;
  pow_u32 offset = thread * per_thread;
  if (offset >= count) return;
  const pow_u32 end = count - offset < per_thread ? count : offset + per_thread;

  // Decimal digits of the run's first nonce, least significant last.
  pow_u32 d[POW_DIGITS];
  pow_u64 n = first + offset;
#pragma unroll
  for (int k = POW_DIGITS - 1; k >= 0; --k) {
    d[k] = (pow_u32)(n % 10u);
    n /= 10u;
  }

#pragma unroll 1
  for (; offset < end; ++offset) {
    PowWord state[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) state[i] = pow_known(pow_mid_word(i));
    PowWord w[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) w[i] = pow_message_word(i, d);
#if POW_BLOCKS == 2
    pow_compress(state, w);
#pragma unroll
    for (int i = 0; i < 16; ++i) w[i] = pow_message_word(16 + i, d);
#endif
    // Only H0, the digest's most significant word, is tested here.
    PowWord s[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) s[i] = state[i];
    pow_compress_rounds(s, w, 64);
    const pow_u32 h0 = (state[0] + s[0]).v;
    if (h0 <= POW_TARGET_TOP) pow_report(found, slots, offset);

    // Next nonce: the carry loop runs on one iteration in ten.
    if (++d[POW_DIGITS - 1] == 10u) {
#pragma unroll
      for (int k = POW_DIGITS - 1; k > 0; --k) {
        if (d[k] == 10u) {
          d[k] = 0u;
          ++d[k - 1];
        }
      }
    }
  }
}

#endif  // POW_GENERIC
