// SHA-256's primitives (FIPS 180-4 §4.1.2, §4.2.2, §5.3.3) for every opkit kernel that hashes:
// the batch kernels (sha256_core.cuh) and the mining kernels (pow_sha256.cuh) build their rounds
// from these and nothing else. One source for three compilers: NVRTC (no system headers), nvcc,
// and a plain host compiler (the CPU backend, the host compression in sha256_compress.cpp, unit
// tests), so it includes nothing and uses only `unsigned int`.
//
// Speed notes (sm_90; docs/perf-sha256.md and docs/perf-pow.md have the measurements). SHA-256 is
// bound by the ALU pipe (SHF, LOP3, IADD3, PRMT, ISETP: 64 lanes per SM per clock). The FMA pipe
// runs beside it: IMAD and, as Nsight Compute on the H200 shows, VIADD (sm_90's add of an
// immediate). So every addition leaves the ALU pipe: two varying terms as IMAD `x * one + y`
// (sha256_add) with `one` in a uniform register, a compile-time constant as a plain `+` (VIADD).
// What stays on the ALU pipe is the algorithm's own bit work: the rotates, shifts and LOP3s of
// Σ0, Σ1, σ0, σ1, Ch and Maj, and the byte swaps. One rule keeps it so: no IMAD may have an
// immediate operand, or ptxas moves `one` to a vector register and every IMAD reads three
// registers (register-bank reads then bound the kernel, tools/sass_banks.py).
//
// Variant switch (-D), measured by bench/sha256_bench.cpp:
//   SHA256_ADD_ON_FMA  1 (default): sha256_add is an IMAD; 0: a plain `+`, which ptxas emits as
//                      IADD3 on the ALU pipe, as hashcat's kernels do
// (Measured on the H200 and deleted, in both kernel families: the σ shifts as IMAD.HI and one Σ
// rotate as IMAD.HI + IMAD, which cut ALU instructions but hold the FMA pipe about four clocks
// per IMAD.HI; a constant added by an IMAD with a vector-register 1. All were slower.)
#ifndef OPKIT_SHA256_PRIMITIVES_CUH
#define OPKIT_SHA256_PRIMITIVES_CUH

// A plain host compiler knows none of CUDA's qualifiers; the CPU backend's shim and CUDA
// compilers define them as macros, so only fill in the missing ones.
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#if defined(__GNUC__)
#define __forceinline__ inline __attribute__((always_inline))
#else
#define __forceinline__ inline
#endif
#endif

#define SHA256_FN __host__ __device__ __forceinline__

#ifndef SHA256_ADD_ON_FMA
#define SHA256_ADD_ON_FMA 1
#endif

// The initial hash value H(0).
#define SHA256_H0 0x6a09e667u
#define SHA256_H1 0xbb67ae85u
#define SHA256_H2 0x3c6ef372u
#define SHA256_H3 0xa54ff53au
#define SHA256_H4 0x510e527fu
#define SHA256_H5 0x9b05688cu
#define SHA256_H6 0x1f83d9abu
#define SHA256_H7 0x5be0cd19u

// Round constant K[i] (0 <= i < 64). A switch rather than a table: with the index known at
// compile time (the callers unroll their rounds) it folds to an immediate on every compiler;
// constexpr, so that the host's SHA-NI code builds its table from it.
// clang-format off
SHA256_FN constexpr unsigned int sha256_k(int i) {
  switch (i) {
    case 0: return 0x428a2f98u; case 1: return 0x71374491u; case 2: return 0xb5c0fbcfu; case 3: return 0xe9b5dba5u;
    case 4: return 0x3956c25bu; case 5: return 0x59f111f1u; case 6: return 0x923f82a4u; case 7: return 0xab1c5ed5u;
    case 8: return 0xd807aa98u; case 9: return 0x12835b01u; case 10: return 0x243185beu; case 11: return 0x550c7dc3u;
    case 12: return 0x72be5d74u; case 13: return 0x80deb1feu; case 14: return 0x9bdc06a7u; case 15: return 0xc19bf174u;
    case 16: return 0xe49b69c1u; case 17: return 0xefbe4786u; case 18: return 0x0fc19dc6u; case 19: return 0x240ca1ccu;
    case 20: return 0x2de92c6fu; case 21: return 0x4a7484aau; case 22: return 0x5cb0a9dcu; case 23: return 0x76f988dau;
    case 24: return 0x983e5152u; case 25: return 0xa831c66du; case 26: return 0xb00327c8u; case 27: return 0xbf597fc7u;
    case 28: return 0xc6e00bf3u; case 29: return 0xd5a79147u; case 30: return 0x06ca6351u; case 31: return 0x14292967u;
    case 32: return 0x27b70a85u; case 33: return 0x2e1b2138u; case 34: return 0x4d2c6dfcu; case 35: return 0x53380d13u;
    case 36: return 0x650a7354u; case 37: return 0x766a0abbu; case 38: return 0x81c2c92eu; case 39: return 0x92722c85u;
    case 40: return 0xa2bfe8a1u; case 41: return 0xa81a664bu; case 42: return 0xc24b8b70u; case 43: return 0xc76c51a3u;
    case 44: return 0xd192e819u; case 45: return 0xd6990624u; case 46: return 0xf40e3585u; case 47: return 0x106aa070u;
    case 48: return 0x19a4c116u; case 49: return 0x1e376c08u; case 50: return 0x2748774cu; case 51: return 0x34b0bcb5u;
    case 52: return 0x391c0cb3u; case 53: return 0x4ed8aa4au; case 54: return 0x5b9cca4fu; case 55: return 0x682e6ff3u;
    case 56: return 0x748f82eeu; case 57: return 0x78a5636fu; case 58: return 0x84c87814u; case 59: return 0x8cc70208u;
    case 60: return 0x90befffau; case 61: return 0xa4506cebu; case 62: return 0xbef9a3f7u; case 63: return 0xc67178f2u;
    default: return 0u;
  }
}
// clang-format on

#ifdef __CUDA_ARCH__
// 1 in constant memory (never written): ptxas cannot see the value, so `x * sha256_one + y` stays
// an IMAD instead of being turned back into an ALU-pipe IADD3.
__constant__ unsigned int sha256_one = 1u;
#endif

// a + b (mod 2^32) for two varying terms, issued on the FMA pipe on the GPU (see
// SHA256_ADD_ON_FMA). A compile-time constant is added with a plain `+` instead (see the top).
SHA256_FN unsigned int sha256_add(unsigned int a, unsigned int b) {
#if defined(__CUDA_ARCH__) && SHA256_ADD_ON_FMA
  unsigned int r;
  asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(sha256_one), "r"(b));
  return r;
#else
  return a + b;
#endif
}

// x rotated right by n (0 < n < 32): one SHF on the GPU however it is spelled, but the spelling
// steers NVVM. The funnel-shift intrinsic (the default) keeps NVVM from rewriting rotates and the
// sums around them: spelled as shifts, the batch kernels' SASS grows (sha256_var: 16 more LOP3 and
// 16 more IMAD per block; 32-byte sha256_fixed: a VIADD becomes a LOP3). The mining kernels'
// partial evaluator is the other way round: it defines SHA256_ROTR_AS_SHIFTS, and with the
// intrinsic its kernels move by a few instructions each way (data_mine 20 B: 1 more ALU; Bitcoin:
// 2 more FMA). Measured with tools/sass_table.py (bench/results/2026-12-03-sha256-once-sass.md).
#ifndef SHA256_ROTR_AS_SHIFTS
#define SHA256_ROTR_AS_SHIFTS 0
#endif
SHA256_FN unsigned int sha256_rotr(unsigned int x, unsigned int n) {
#if defined(__CUDA_ARCH__) && !SHA256_ROTR_AS_SHIFTS
  return __funnelshift_r(x, x, n);
#else
  return (x >> n) | (x << (32u - n));
#endif
}

// Big-endian word from 4 bytes (SHA-256 reads its message big-endian): one PRMT on the GPU.
SHA256_FN unsigned int sha256_bswap(unsigned int x) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, 0u, 0x0123u);
#else
  return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
#endif
}

// The six functions of FIPS 180-4 §4.1.2; each compiles to its shifts plus one LOP3.
SHA256_FN unsigned int sha256_big_sigma0(unsigned int x) {
  return sha256_rotr(x, 2) ^ sha256_rotr(x, 13) ^ sha256_rotr(x, 22);
}
SHA256_FN unsigned int sha256_big_sigma1(unsigned int x) {
  return sha256_rotr(x, 6) ^ sha256_rotr(x, 11) ^ sha256_rotr(x, 25);
}
SHA256_FN unsigned int sha256_small_sigma0(unsigned int x) {
  return sha256_rotr(x, 7) ^ sha256_rotr(x, 18) ^ (x >> 3);
}
SHA256_FN unsigned int sha256_small_sigma1(unsigned int x) {
  return sha256_rotr(x, 17) ^ sha256_rotr(x, 19) ^ (x >> 10);
}
SHA256_FN unsigned int sha256_ch(unsigned int x, unsigned int y, unsigned int z) {
  return z ^ (x & (y ^ z));
}
SHA256_FN unsigned int sha256_maj(unsigned int x, unsigned int y, unsigned int z) {
  return (x & y) | (z & (x | y));
}

#endif  // OPKIT_SHA256_PRIMITIVES_CUH
