// The AES program (embedded kernel source and headers) and its kernels through the cipher kernel
// set, which compiles it once per device.
#include "aes_kernels.hpp"

#include "aes_batch_io.hpp"
#include "cipher_kernels.hpp"

namespace opkit::ops::aes {

Program aes_program() {
  Program program(detail::cipher_source("aes.cu"));
  program.name("aes.cu");
  for (const char* header :
       {"aes_batch_layout.cuh", "aes_batch_stage.cuh", "aes_bitslice.cuh", "aes_gf128.cuh", "aes_ghash_mma.cuh",
        "aes_ghash_mma_shape.cuh", "aes_key.cuh", "aes_state.cuh", "cipher_io.cuh"})
    program.header(header, detail::cipher_source(header));
  return program;
}

AesKernels aes_kernels(const Device& device) {
  const detail::CipherProgram aes{.source = detail::CipherProgram::Source::aes};
  auto kernel = [&](const char* name) { return detail::cipher_kernel(device, aes, name); };
  AesKernels k{kernel("aes_setup"),
               kernel("aes_setup_batch"),
               kernel("aes_setup_blocks"),
               kernel("aes_ctr"),
               kernel("aes_ctr_batch"),
               kernel("aes_ctr_masked"),
               kernel("aes_ghash"),
               kernel("aes_gcm_tag"),
               std::nullopt,
               std::nullopt,
               std::nullopt};
  if (tensor_core_ghash(device)) {  // compiled only for CUDA from sm_80 (kernels/aes.cu)
    k.ghash_mma_products = kernel("aes_ghash_mma_products");
    k.ghash_mma_fragments = kernel("aes_ghash_mma_fragments");
    k.ghash_mma = kernel("aes_ghash_mma");
  }
  return k;
}

}  // namespace opkit::ops::aes
