// GHASH of the ciphertext inside the fused bulk GCM kernel (aes_gcm_bulk in aes.cu): each thread
// runs Horner over the 32 blocks of its CTR unit, and the warp weights and XORs its sums into the
// message's accumulator, so that the data is read once and GHASH's multiplications (FMA pipe)
// overlap other warps' AES rounds (ALU pipe).
//
// Weights: GHASH(A || C || L) = sum of X_i H^(n + 1 - i) over the stream's blocks i = 1..n, so
// ciphertext block j (from 0) of c weighs H^(c + 1 - j). The c blocks are laid out in
// W = ceil(c / 1024) groups of 1024 positions p = j + pad with pad = 1024 W - c, i.e. the partial
// group is the first and every group ends a multiple of 1024 before the end. Lane t of a warp
// holds positions 1024 g + t + 32 k (k < 32), of weight H^(1024 W + 1 - p) =
//   H^(1024 (W - 1 - g)) * H^(33 - t) * H^(32 (31 - k)):
// Horner with H^32 over k, then the lane's power (a table indexed by the lane number), then the
// group's power (binary powers of H^1024; the exponent is a public position).
#pragma once

#include "aes_ctr.cuh"
#include "aes_gf128.cuh"
#include "aes_state.cuh"

// Blocks of positions per group (one warp's CTR unit: 32 lanes x 32 blocks).
#define AES_GCM_GROUP_BLOCKS 1024ull

// acc * H^32 ^ X_k over the blocks first + 32 k (k < 32) of the `length`-byte buffer at p, where
// blocks outside [0, blocks) count as zero (a first "below zero", modulo 2^64, is the pad).
// started: whether acc holds earlier blocks; if not, its first multiplication (of zero) is left out.
__device__ __forceinline__ AesGf128 aes_ghash_unit(AesGf128 acc, bool started, AesGf128 h32, const unsigned char* p,
                                                   unsigned long long length, unsigned long long first) {
  const unsigned long long blocks = (length + 15) / 16;
  unsigned int next[4] = {0, 0, 0, 0};
  if (first < blocks) aes_load_block(p + 16 * first, length - 16 * first, next);
    // The load of block k + 1 is issued before block k's multiplication, which then hides its latency.
#pragma unroll 1
  for (int k = 0; k < 32; ++k) {
    const AesGf128 x = aes_gf128_from_words(next);
    const unsigned long long d = first + 32ull * (k + 1);
    next[0] = next[1] = next[2] = next[3] = 0;
    if (k + 1 < 32 && d < blocks) aes_load_block(p + 16 * d, length - 16 * d, next);
    if (started || k > 0) acc = aes_gf128_mul(acc, h32);
    acc.lo ^= x.lo;
    acc.hi ^= x.hi;
  }
  return acc;
}

// Adds the warp's sum of acc_t * H^(33 - t), times H^(1024 e), to the message's accumulator: e is
// the number of groups after the warp's last one. Every lane of the warp must call it (shuffles).
__device__ __forceinline__ void aes_ghash_unit_add(AesState* st, AesGf128 acc, unsigned int lane,
                                                   unsigned long long e) {
  acc = aes_gf128_mul(acc, st->lane_powers[lane]);
#ifdef __CUDA_ARCH__
  for (int lane_mask = 16; lane_mask >= 1; lane_mask >>= 1) {
    acc.lo ^= __shfl_xor_sync(0xffffffffu, acc.lo, lane_mask);
    acc.hi ^= __shfl_xor_sync(0xffffffffu, acc.hi, lane_mask);
  }
#endif
  // h_powers[s] = H^(32 * 2^s) (chunks of 32 blocks), so H^(1024 * 2^s) is h_powers[s + 5].
  for (int s = 0; (e >> s) != 0; ++s)
    if ((e >> s) & 1) acc = aes_gf128_mul(acc, st->h_powers[s + 5]);
#ifdef __CUDA_ARCH__
  if (lane != 0) return;  // one atomic per warp
#endif
  atomicXor(&st->ghash.lo, acc.lo);
  atomicXor(&st->ghash.hi, acc.hi);
}
