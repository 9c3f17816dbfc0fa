// SHA-256 compression on the host: one 64-byte block into an 8-word state. Two implementations,
// the x86 SHA extensions (SHA-NI) where the CPU has them and elsewhere the kernels' own core
// (kernels/sha256_core.cuh) compiled by the host compiler, chosen once at run time. The CPU miner
// and the host's midstates use whichever is best.
#pragma once

#include <array>
#include <cstdint>

namespace opkit::ops::detail {

using Sha256State = std::array<std::uint32_t, 8>;

// H(0), from the kernels' primitives (kernels/sha256_primitives.cuh).
extern const Sha256State sha256_iv;

using Sha256Compress = void (*)(std::uint32_t state[8], const std::uint8_t block[64]);

// kernels/sha256_core.cuh's sha256_compress, compiled for the host.
void sha256_compress_portable(std::uint32_t state[8], const std::uint8_t block[64]);
// Only callable when sha_ni_available().
void sha256_compress_sha_ni(std::uint32_t state[8], const std::uint8_t block[64]);
bool sha_ni_available();

// The fastest implementation this CPU runs, and its name ("sha-ni" or "portable").
Sha256Compress best_sha256_compress();
const char* best_sha256_compress_name();

// Big-endian load/store of a 32-bit word.
inline std::uint32_t load_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

}  // namespace opkit::ops::detail
