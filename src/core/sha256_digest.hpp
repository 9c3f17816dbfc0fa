// Host-side SHA-256 of a byte string (OpenSSL), for cache keys and integrity checks.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace opkit::detail {

// Initialises OpenSSL once, without its exit-time cleanup, so that it outlives every static
// destructor (one waits for background compiles that hash). Called before any OpenSSL use.
void init_openssl();
std::array<std::uint8_t, 32> sha256_digest(std::string_view bytes);
std::string to_hex(const std::uint8_t* data, std::size_t size);

}  // namespace opkit::detail
