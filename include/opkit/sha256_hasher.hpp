// SHA-256 on the host through OpenSSL (SHA-NI where the CPU has it), and the digest type of every
// SHA-256 in opkit. The one place opkit calls OpenSSL: the kernel cache keys and checks its
// entries with it, the SHA-256 operators' CPU path hashes batches with one hasher per thread,
// the miners check candidates with it, and `opkit hash` streams files through it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace opkit {

inline constexpr std::size_t sha256_digest_bytes = 32;
// A SHA-256 digest as the algorithm outputs it (not byte-reversed).
using Sha256Digest = std::array<std::uint8_t, sha256_digest_bytes>;

// Hashes one message at a time, given whole or in pieces; reusable (a batch keeps one per thread,
// since creating one costs more than hashing a short message). Not shareable between threads.
// The constructor throws Error(unavailable) if OpenSSL cannot hash SHA-256, the others
// Error(runtime) if OpenSSL fails.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(Sha256Hasher&&) noexcept;
  Sha256Hasher& operator=(Sha256Hasher&&) noexcept;

  // Adds bytes to the current message.
  Sha256Hasher& update(std::span<const std::uint8_t> bytes);
  Sha256Hasher& update(std::string_view bytes);
  // The current message's digest; the hasher then starts a new, empty message.
  Sha256Digest finish();
  // update(message) then finish(): the digest of one whole message when none is under way.
  Sha256Digest digest(std::span<const std::uint8_t> message);
  Sha256Digest digest(std::string_view message);

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace opkit
