// The AES kernels of one device: the embedded kernel source, compiled once per device by the
// cipher kernel set (cipher_kernels.hpp).
#pragma once

#include <optional>

#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/program.hpp"

namespace opkit::ops::aes {

struct AesKernels {
  Kernel setup;         // aes_setup: key schedules, GCM H / J0 / E_K(J0) / powers of H
  Kernel setup_batch;   // aes_setup_batch: batches' key schedules and counters (CTR, GCM with 12-byte IVs)
  Kernel setup_blocks;  // aes_setup_blocks: GCM batches' H and E_K(J0), 16 messages per thread
  Kernel ctr;           // aes_ctr: bitsliced counter-mode keystream XOR, round keys from key bytes
  Kernel ctr_batch;     // aes_ctr_batch: aes_ctr for batches, the IO staged through shared memory
  Kernel ctr_masked;    // aes_ctr_masked: the same with precomputed round-key masks (bulk)
  Kernel ghash;         // aes_ghash: GHASH over AAD || C || lengths
  Kernel tag;           // aes_gcm_tag: tag out, or constant-time tag check
  // Bulk GHASH on the tensor cores, where tensor_core_ghash(device) (aes_batch_io.hpp):
  std::optional<Kernel> ghash_mma_products;   // aes_ghash_mma_products: the powers of H as products
  std::optional<Kernel> ghash_mma_fragments;  // aes_ghash_mma_fragments: those as the MMA's B fragments
  std::optional<Kernel> ghash_mma;            // aes_ghash_mma: whole chunks of data as matrix products
};

// The kernel source with its headers, as NVRTC and the CPU backend both take it.
Program aes_program();

// The kernels compiled for `device` (compiled on first use, then reused).
AesKernels aes_kernels(const Device& device);

}  // namespace opkit::ops::aes
