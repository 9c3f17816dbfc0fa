// Bulk GHASH of whole chunks on the tensor cores (sm_80 and later): multiplying by a fixed power
// of H is a linear map over GF(2), so a chunk's GHASH sum is a bit-matrix product, and the
// tensor pipe's 1-bit MMA (m16n8k256 .b1, AND then population count) computes each output bit's
// sum of products as a count whose low bit is the GF(2) sum. The data goes in as it is (no bit
// expanded to a byte), the matrix (the powers of H as bit matrices) is prepared once a call, and
// nothing depends on the data or H but the values computed: constant-time like the rest.
//
// Shapes. A warp takes one chunk of AES_MMA_CHUNK_BLOCKS blocks (8 KiB) as 16 rows of
// AES_MMA_ROW_BLOCKS blocks: row r is the A operand's row r, and a k-step of 256 bits covers two
// words of four consecutive blocks of each row (which words: aes_mma_slot). For each k-step the
// B operand is 16 n-tiles of 8 output bits: column o of the product is bit o of the row's sum
// over its blocks q of X_q * H^(AES_MMA_ROW_BLOCKS - q). The rows' sums are then multiplied by
// H^(AES_MMA_ROW_BLOCKS * (15 - r)) and added, which gives the chunk's sum of X_i H^(512 - i),
// exactly what aes_ghash's Horner loop gives for a chunk of 512 blocks; the caller then applies
// the same power of H for the chunk's place in the message.
//
// Fragments (PTX ISA, mma.m16n8k256 .b1; lane = 4 g + t): A: a0 / a2 row g, a1 / a3 row g + 8,
// bits k = 32 t + i of a0 / a1 and 128 + 32 t + i of a2 / a3; B: b0 bits k = 32 t + i and b1
// 128 + 32 t + i of column g; C / D: c0, c1 row g, columns 2 t and 2 t + 1; c2, c3 row g + 8. A
// and B number the bits of a register alike, so the matrix only has to agree with the data on
// which 32-bit range (t, or 4 + t) holds which data word.
#pragma once

#include "aes_gf128.cuh"
#include "aes_ghash_mma_shape.cuh"

// Which block q of a row and which word w of it the 32-bit range r (0..7) of k-step s holds. A
// lane t loads 16 bytes (block 4 p + t of its rows, p = s / 2) and gives words 0 and 1 to the even
// k-step, words 2 and 3 to the odd one: range t the even word, range 4 + t the odd one.
__device__ __forceinline__ void aes_mma_slot(int s, int r, int& q, int& w) {
  q = 4 * (s >> 1) + (r & 3);
  w = 2 * (s & 1) + (r >> 2);
}

// Product j (0 .. AES_MMA_PRODUCTS - 1): j = (q * 4 + w) * 32 + i, the block with only bit i of
// its little-endian word w set, as a field element, times H^(AES_MMA_ROW_BLOCKS - q).
__device__ __forceinline__ AesGf128 aes_mma_product(AesGf128 h, int j) {
  const int i = j & 31, w = (j >> 5) & 3, q = j >> 7;
  unsigned int words[4] = {0, 0, 0, 0};
  words[w] = 1u << i;
  return aes_gf128_mul(aes_gf128_from_words(words), aes_gf128_pow(h, AES_MMA_ROW_BLOCKS - q));
}

__device__ __forceinline__ unsigned int aes_gf128_bit(AesGf128 x, int o) {
  return static_cast<unsigned int>((o < 64 ? x.lo >> o : x.hi >> (o - 64)) & 1u);
}

// B fragment word `which` (0: b0, 1: b1) of k-step s, n-tile n, lane: bit i is output bit
// 8 n + g of the product for the data bit that range t (or 4 + t) of the k-step holds at i.
__device__ __forceinline__ unsigned int aes_mma_fragment_word(const AesGf128* products, int s, int n, int lane,
                                                              int which) {
  const int g = lane >> 2, t = lane & 3;
  int q, w;
  aes_mma_slot(s, which * 4 + t, q, w);
  const AesGf128* column = products + (q * 4 + w) * 32;
  unsigned int word = 0;
  for (int i = 0; i < 32; ++i) word |= aes_gf128_bit(column[i], 8 * n + g) << i;
  return word;
}

__device__ __forceinline__ void aes_mma_b1(int* d, const unsigned int* a, unsigned int b0, unsigned int b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Block b (0 .. AES_MMA_CHUNK_BLOCKS - 1) of a chunk whose block 0 is data block `first` (which
// may be before the data), or zero outside data blocks [0, whole): a position-dependent choice.
__device__ __forceinline__ uint4 aes_mma_block(const uint4* data, long long first, unsigned long long whole, int b) {
  const long long d = first + b;
  return d >= 0 && static_cast<unsigned long long>(d) < whole ? data[d] : make_uint4(0, 0, 0, 0);
}

// The chunk's sum of X_i H^(AES_MMA_CHUNK_BLOCKS - i) over its blocks, by the whole warp; every
// lane returns it. The chunk's block 0 is block `first` of `whole` data blocks (16-byte aligned,
// in global memory); its blocks outside the data count as zero (the first and last chunks of a
// message, which the stream's AAD and lengths block share). fragments: the B fragments (shared
// memory), row_powers[r] = H^(AES_MMA_ROW_BLOCKS * (15 - r)).
__device__ __forceinline__ AesGf128 aes_mma_chunk(const uint4* data, long long first, unsigned long long whole,
                                                  const uint2* fragments, const AesGf128* row_powers) {
  const int lane = static_cast<int>(threadIdx.x & 31), g = lane >> 2, t = lane & 3;
  int acc[AES_MMA_NTILES][4];
#pragma unroll
  for (int n = 0; n < AES_MMA_NTILES; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0;
  const int row_lo = g * AES_MMA_ROW_BLOCKS + t, row_hi = row_lo + 8 * AES_MMA_ROW_BLOCKS;
  uint4 x = aes_mma_block(data, first, whole, row_lo), y = aes_mma_block(data, first, whole, row_hi);
#pragma unroll
  for (int p = 0; p < AES_MMA_KSTEPS / 2; ++p) {
    uint4 next_x = x, next_y = y;
    if (p + 1 < AES_MMA_KSTEPS / 2) {
      next_x = aes_mma_block(data, first, whole, row_lo + 4 * (p + 1));
      next_y = aes_mma_block(data, first, whole, row_hi + 4 * (p + 1));
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int s = 2 * p + half;
      const unsigned int a[4] = {half ? x.z : x.x, half ? y.z : y.x, half ? x.w : x.y, half ? y.w : y.y};
      const uint2* b = fragments + s * AES_MMA_NTILES * 32 + lane;
#pragma unroll
      for (int n = 0; n < AES_MMA_NTILES; ++n) {
        const uint2 bn = b[n * 32];
        aes_mma_b1(acc[n], a, bn.x, bn.y);
      }
    }
    x = next_x;
    y = next_y;
  }
  // Row g's and row g + 8's sums: each lane has output bits 8 n + 2 t and 8 n + 2 t + 1 of both.
  unsigned long long lo_g = 0, hi_g = 0, lo_h = 0, hi_h = 0;
#pragma unroll
  for (int n = 0; n < AES_MMA_NTILES; ++n) {
    const int o = 8 * (n & 7) + 2 * t;
    const unsigned long long bits_g = (acc[n][0] & 1ull) << o | (acc[n][1] & 1ull) << (o + 1);
    const unsigned long long bits_h = (acc[n][2] & 1ull) << o | (acc[n][3] & 1ull) << (o + 1);
    if (n < 8) {
      lo_g |= bits_g;
      lo_h |= bits_h;
    } else {
      hi_g |= bits_g;
      hi_h |= bits_h;
    }
  }
#pragma unroll
  for (int m = 1; m <= 2; m <<= 1) {
    lo_g |= __shfl_xor_sync(0xffffffffu, lo_g, m);
    hi_g |= __shfl_xor_sync(0xffffffffu, hi_g, m);
    lo_h |= __shfl_xor_sync(0xffffffffu, lo_h, m);
    hi_h |= __shfl_xor_sync(0xffffffffu, hi_h, m);
  }
  // Lane t = 0 of group g weighs row g, lane t = 1 row g + 8; the others add nothing.
  AesGf128 row = {t == 0 ? lo_g : lo_h, t == 0 ? hi_g : hi_h};
  const int r = t == 0 ? g : g + 8;
  AesGf128 sum = aes_gf128_mul(row, row_powers[r]);
  if (t > 1) sum.lo = sum.hi = 0;
#pragma unroll
  for (int m = 16; m >= 1; m >>= 1) {
    sum.lo ^= __shfl_xor_sync(0xffffffffu, sum.lo, m);
    sum.hi ^= __shfl_xor_sync(0xffffffffu, sum.hi, m);
  }
  return sum;
}
