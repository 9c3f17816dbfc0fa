// The shapes of bulk GHASH on the tensor cores (aes_ghash_mma.cuh), which the host sizes its
// launches and scratch by: plain macros, included by the host code as well.
#pragma once

#define AES_MMA_ROWS 16
#define AES_MMA_ROW_BLOCKS 32
// A warp's chunk: 512 blocks, 8 KiB.
#define AES_MMA_CHUNK_BLOCKS (AES_MMA_ROWS * AES_MMA_ROW_BLOCKS)
#define AES_MMA_KSTEPS (AES_MMA_ROW_BLOCKS / 2)
#define AES_MMA_NTILES 16
// The B fragments of every k-step and n-tile, two words a lane: 64 KiB.
#define AES_MMA_FRAGMENT_PAIRS (AES_MMA_KSTEPS * AES_MMA_NTILES * 32)
// The products X * H^e that the fragments are made of: a basis vector (word w, bit i) of each of a
// row's blocks q, times H^(AES_MMA_ROW_BLOCKS - q).
#define AES_MMA_PRODUCTS (AES_MMA_ROW_BLOCKS * 4 * 32)
