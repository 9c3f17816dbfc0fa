// OpenSSL EVP SHA-256 over a batch, one EVP context per OpenMP thread (a context per message
// would cost more than hashing a short message).
#include "sha256_cpu.hpp"

#include <openssl/evp.h>

#include <atomic>
#include <memory>
#include <string>

#include "core/sha256_digest.hpp"
#include "opkit/error.hpp"

namespace opkit::ops::detail {
namespace {

struct MdDeleter {
  void operator()(EVP_MD* md) const noexcept { EVP_MD_free(md); }
};
struct CtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
};

// Fetched once: an implicit fetch inside every EVP_DigestInit would cost a provider lookup.
const EVP_MD* sha256_md() {
  // Never freed: hashing threads may still use it while the process exits.
  opkit::detail::init_openssl();
  static const EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (md == nullptr) throw Error(Errc::unavailable, "EVP_MD_fetch", "OpenSSL has no SHA256 implementation");
  return md;
}

class Hasher {
 public:
  Hasher() : md_(sha256_md()), ctx_(EVP_MD_CTX_new()) {}
  bool ok() const { return ctx_ != nullptr; }

  bool digest(const std::uint8_t* data, std::size_t size, std::uint8_t* out) {
    unsigned int length = 0;
    return EVP_DigestInit_ex2(ctx_.get(), md_, nullptr) == 1 && EVP_DigestUpdate(ctx_.get(), data, size) == 1 &&
           EVP_DigestFinal_ex(ctx_.get(), out, &length) == 1;
  }
  bool hash(HashAlgo algo, const std::uint8_t* data, std::size_t size, std::uint8_t* out) {
    if (!digest(data, size, out)) return false;
    if (algo == HashAlgo::sha256) return true;
    std::uint8_t first[sha256_digest_bytes];
    for (std::size_t i = 0; i < sha256_digest_bytes; ++i) first[i] = out[i];
    return digest(first, sizeof first, out);
  }

 private:
  const EVP_MD* md_;
  std::unique_ptr<EVP_MD_CTX, CtxDeleter> ctx_;
};

// Runs hash_one(hasher, i) for i in [0, count) over all cores; a failure in any thread becomes
// one Error after the loop (exceptions must not leave an OpenMP region).
template <class HashOne>
void parallel_hash(std::size_t count, HashOne hash_one) {
  sha256_md();  // throws here, outside the parallel region, if OpenSSL lacks SHA-256
  std::atomic<bool> failed{false};
  const auto n = static_cast<long long>(count);
#pragma omp parallel if (count > 64)
  {
    Hasher hasher;
    if (!hasher.ok()) failed = true;
#pragma omp for schedule(dynamic, 256)
    for (long long i = 0; i < n; ++i) {
      if (failed.load(std::memory_order_relaxed)) continue;
      if (!hash_one(hasher, static_cast<std::size_t>(i))) failed = true;
    }
  }
  if (failed) throw Error(Errc::runtime, "OpenSSL EVP SHA-256", "hashing failed inside OpenSSL");
}

}  // namespace

void cpu_hash_fixed(HashAlgo algo, const std::uint8_t* data, std::size_t message_bytes, std::size_t count,
                    std::uint8_t* digests) {
  parallel_hash(count, [&](Hasher& hasher, std::size_t i) {
    return hasher.hash(algo, data + i * message_bytes, message_bytes, digests + i * sha256_digest_bytes);
  });
}

void cpu_hash_variable(HashAlgo algo, const std::uint8_t* data, const std::uint64_t* offsets, std::size_t count,
                       std::uint8_t* digests) {
  parallel_hash(count, [&](Hasher& hasher, std::size_t i) {
    return hasher.hash(algo, data + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i]),
                       digests + i * sha256_digest_bytes);
  });
}

}  // namespace opkit::ops::detail
