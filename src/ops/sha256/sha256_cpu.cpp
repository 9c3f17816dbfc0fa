// The operators' host path over a batch: one Sha256Hasher (OpenSSL) per OpenMP thread, since a
// hasher per message would cost more than hashing a short message.
#include "sha256_cpu.hpp"

#include <algorithm>
#include <atomic>
#include <optional>

#include "opkit/error.hpp"
#include "opkit/sha256_hasher.hpp"

namespace opkit::ops::detail {
namespace {

// H(m) of one message into out.
void hash(Sha256Hasher& hasher, HashAlgo algo, const std::uint8_t* data, std::size_t size, std::uint8_t* out) {
  Sha256Digest digest = hasher.digest(std::span(data, size));
  if (algo == HashAlgo::sha256d) digest = hasher.digest(digest);
  std::copy(digest.begin(), digest.end(), out);
}

// Runs hash_one(hasher, i) for i in [0, count) over all cores; a failure in any thread becomes
// one Error after the loop (exceptions must not leave an OpenMP region).
template <class HashOne>
void parallel_hash(std::size_t count, HashOne hash_one) {
  // Throws here, outside the parallel region, if OpenSSL lacks SHA-256.
  [[maybe_unused]] const Sha256Hasher probe;
  std::atomic<bool> failed{false};
  const auto n = static_cast<long long>(count);
#pragma omp parallel if (count > 64)
  {
    std::optional<Sha256Hasher> hasher;
    try {
      hasher.emplace();
    } catch (...) {
      failed = true;
    }
#pragma omp for schedule(dynamic, 256)
    for (long long i = 0; i < n; ++i) {
      if (!hasher || failed.load(std::memory_order_relaxed)) continue;
      try {
        hash_one(*hasher, static_cast<std::size_t>(i));
      } catch (...) {
        failed = true;
      }
    }
  }
  if (failed) throw Error(Errc::runtime, "OpenSSL EVP SHA-256", "hashing failed inside OpenSSL");
}

}  // namespace

void cpu_hash_fixed(HashAlgo algo, const std::uint8_t* data, std::size_t message_bytes, std::size_t count,
                    std::uint8_t* digests) {
  parallel_hash(count, [&](Sha256Hasher& hasher, std::size_t i) {
    hash(hasher, algo, data + i * message_bytes, message_bytes, digests + i * sha256_digest_bytes);
  });
}

void cpu_hash_variable(HashAlgo algo, const std::uint8_t* data, const std::uint64_t* offsets, std::size_t count,
                       std::uint8_t* digests) {
  parallel_hash(count, [&](Sha256Hasher& hasher, std::size_t i) {
    hash(hasher, algo, data + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i]),
         digests + i * sha256_digest_bytes);
  });
}

}  // namespace opkit::ops::detail
