// The shared memory of the batch CTR kernel (aes_ctr_batch, aes_batch_stage.cuh), sized by the host
// for the launch: plain macros, included by the host code as well.
#pragma once

// Threads per block of aes_setup_batch, whose static shared memory holds a block's states.
#define AES_SETUP_BATCH_THREADS 128
// Threads per block of aes_ctr_batch, each covering up to 32 blocks (512 bytes) of one message.
#define AES_BATCH_THREADS 128
// A warp's units cover at most 32 * 512 contiguous bytes: at any alignment, 1025 aligned chunks.
#define AES_WARP_CHUNKS (32 * 32 + 1)
// A warp's slots: its chunks with one 16-byte pad slot after every 32 (aes_stage_slot), so that
// chunks 32 apart have slots 33 apart.
#define AES_WARP_SLOTS (AES_WARP_CHUNKS + AES_WARP_CHUNKS / 32)
// Dynamic shared memory of a block: its warps' slots.
#define AES_BATCH_STAGE_BYTES (16 * AES_WARP_SLOTS * (AES_BATCH_THREADS / 32))
