// The portable host compression: the batch kernels' core compiled by the host compiler, so that
// the host and the GPU share one implementation (and the host one is tested wherever it runs).
#include "sha256_compress.hpp"

#include "kernels/sha256_core.cuh"

namespace opkit::ops::detail {

const Sha256State sha256_iv = {SHA256_H0, SHA256_H1, SHA256_H2, SHA256_H3, SHA256_H4, SHA256_H5, SHA256_H6, SHA256_H7};

void sha256_compress_portable(std::uint32_t state[8], const std::uint8_t block[64]) {
  unsigned int w[16];
  for (int i = 0; i < 16; ++i) w[i] = load_be32(block + 4 * i);
  unsigned int s[8];
  for (int i = 0; i < 8; ++i) s[i] = state[i];
  ::sha256_compress(s, w);
  for (int i = 0; i < 8; ++i) state[i] = s[i];
}

Sha256Compress best_sha256_compress() {
  static const Sha256Compress chosen = sha_ni_available() ? &sha256_compress_sha_ni : &sha256_compress_portable;
  return chosen;
}

const char* best_sha256_compress_name() {
  return sha_ni_available() ? "sha-ni" : "portable";
}

}  // namespace opkit::ops::detail
