// Sha256Hasher through OpenSSL's EVP interface: the SHA-256 implementation fetched once, one
// reusable EVP context per hasher.
#include "opkit/sha256_hasher.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "openssl_init.hpp"
#include "opkit/error.hpp"

namespace opkit {
namespace detail {

void init_openssl() {
  // OPENSSL_INIT_NO_ATEXIT: by default OpenSSL frees its state from an atexit handler registered
  // at its first use, and a background kernel compile still hashing its cache entry at exit (they
  // are waited for from a static destructor, see kernel_miner.cpp) then crashed in EVP_Digest.
  // When another library initialised OpenSSL first, its handler was registered before ours and
  // runs after that wait, which is safe too.
  static const bool initialised = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1;
  if (!initialised) throw Error(Errc::unavailable, "OPENSSL_init_crypto", "OpenSSL failed to initialise");
}

}  // namespace detail

namespace {

// Fetched once and never freed (hashing threads may still use it while the process exits): an
// implicit fetch inside every EVP_DigestInit would cost a provider lookup per message.
const EVP_MD* sha256_md() {
  detail::init_openssl();
  static const EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (md == nullptr) throw Error(Errc::unavailable, "EVP_MD_fetch", "OpenSSL has no SHA256 implementation");
  return md;
}

[[noreturn]] void fail(const char* call, Errc code = Errc::runtime) {
  throw Error(code, call, "OpenSSL could not compute a SHA-256 digest");
}

}  // namespace

struct Sha256Hasher::Context {
  EVP_MD_CTX* ctx = nullptr;
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256Hasher::Sha256Hasher() : context_(std::make_unique<Context>()) {
  const EVP_MD* md = sha256_md();
  context_->ctx = EVP_MD_CTX_new();
  if (context_->ctx == nullptr) fail("EVP_MD_CTX_new", Errc::unavailable);
  if (EVP_DigestInit_ex2(context_->ctx, md, nullptr) != 1) fail("EVP_DigestInit_ex2", Errc::unavailable);
}

Sha256Hasher::~Sha256Hasher() = default;
Sha256Hasher::Sha256Hasher(Sha256Hasher&&) noexcept = default;
Sha256Hasher& Sha256Hasher::operator=(Sha256Hasher&&) noexcept = default;

Sha256Hasher& Sha256Hasher::update(std::span<const std::uint8_t> bytes) {
  if (EVP_DigestUpdate(context_->ctx, bytes.data(), bytes.size()) != 1) fail("EVP_DigestUpdate");
  return *this;
}

Sha256Hasher& Sha256Hasher::update(std::string_view bytes) {
  return update(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

Sha256Digest Sha256Hasher::finish() {
  Sha256Digest out{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context_->ctx, out.data(), &size) != 1 || size != out.size()) fail("EVP_DigestFinal_ex");
  // A finished context starts its next message from the same implementation, without a fetch.
  if (EVP_DigestInit_ex2(context_->ctx, nullptr, nullptr) != 1) fail("EVP_DigestInit_ex2");
  return out;
}

Sha256Digest Sha256Hasher::digest(std::span<const std::uint8_t> message) {
  return update(message).finish();
}

Sha256Digest Sha256Hasher::digest(std::string_view message) {
  return update(message).finish();
}

}  // namespace opkit
