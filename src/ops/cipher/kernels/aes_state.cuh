// The per-message state the AES kernels share: written by aes_setup, read by the CTR, GHASH and
// GCM tag kernels, wiped by the host when the operation ends. Plain data, included by the host
// code as well (its size and layout must agree on both sides).
#pragma once

// GHASH chunks of a bulk message are combined with the powers H^(chunk_blocks * 2^s).
#define AES_GHASH_POWERS 40

struct AesGf128 {
  unsigned long long lo, hi;  // coefficients of x^0..x^63 and x^64..x^127
};

struct AesState {
  unsigned int round_keys[60];  // rounds + 1 keys, 4 little-endian words each
  unsigned int rounds;          // 10, 12 or 14
  unsigned int counter_bits;    // 128 (CTR) or 32 (GCM's inc32)
  unsigned int counter[4];      // counter block of the first data block, big-endian words
  unsigned int tag_mask[4];     // GCM: E_K(J0), little-endian words of its bytes
  AesGf128 h;                   // GCM: the hash key E_K(0^128)
  AesGf128 ghash;               // GCM: the GHASH accumulator (XOR-reduced by the GHASH kernel)
};
// Bulk GCM's powers H^(chunk_blocks * 2^s) live apart (AES_GHASH_POWERS per message), so that a
// batch's state is 312 bytes a message, not 952.
