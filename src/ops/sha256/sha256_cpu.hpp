// The host-CPU path of the SHA-256 operators: Sha256Hasher (OpenSSL, SHA-NI where the CPU has
// it), parallel over messages with OpenMP. Inputs are already validated by the caller.
#pragma once

#include <cstddef>
#include <cstdint>

#include "opkit/ops/sha256.hpp"

namespace opkit::ops::detail {

// count messages of message_bytes each, back to back.
void cpu_hash_fixed(HashAlgo algo, const std::uint8_t* data, std::size_t message_bytes, std::size_t count,
                    std::uint8_t* digests);
// Message i is data[offsets[i], offsets[i + 1]).
void cpu_hash_variable(HashAlgo algo, const std::uint8_t* data, const std::uint64_t* offsets, std::size_t count,
                       std::uint8_t* digests);

}  // namespace opkit::ops::detail
