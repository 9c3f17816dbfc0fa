// OpenSSL EVP implementation of the cipher operators (see cipher_evp.hpp).
#include "cipher_evp.hpp"

#include <omp.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <memory>
#include <string>

namespace opkit::ops::detail {
namespace {

const EVP_CIPHER* evp_cipher(Cipher cipher) {
  switch (cipher) {
    case Cipher::aes_128_ctr:
      return EVP_aes_128_ctr();
    case Cipher::aes_192_ctr:
      return EVP_aes_192_ctr();
    case Cipher::aes_256_ctr:
      return EVP_aes_256_ctr();
    case Cipher::aes_128_gcm:
      return EVP_aes_128_gcm();
    case Cipher::aes_192_gcm:
      return EVP_aes_192_gcm();
    case Cipher::aes_256_gcm:
      return EVP_aes_256_gcm();
    case Cipher::chacha20:
      return EVP_chacha20();
    case Cipher::chacha20_poly1305:
      return EVP_chacha20_poly1305();
  }
  return nullptr;
}

bool is_gcm(Cipher c) {
  return c == Cipher::aes_128_gcm || c == Cipher::aes_192_gcm || c == Cipher::aes_256_gcm;
}

[[noreturn]] void fail(const char* call) {
  const unsigned long code = ERR_get_error();
  char text[256] = "no OpenSSL error queued";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  throw Error(Errc::runtime, call, text);
}

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;  // free cleanses the key

// EVP takes int lengths: feed at most 1 GiB per call.
constexpr std::size_t max_update = std::size_t{1} << 30;

void update(EVP_CIPHER_CTX* ctx, std::uint8_t* out, const std::uint8_t* in, std::size_t bytes) {
  for (std::size_t at = 0; at < bytes; at += max_update) {
    const int n = static_cast<int>(std::min(max_update, bytes - at));
    int written = 0;
    if (EVP_CipherUpdate(ctx, out ? out + at : nullptr, &written, in + at, n) != 1) fail("EVP_CipherUpdate");
  }
}

unsigned worker_count(unsigned threads) {
  return threads != 0 ? threads : static_cast<unsigned>(std::max(1, omp_get_max_threads()));
}

}  // namespace

bool evp_message(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in, std::uint8_t* out,
                 std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes) {
  const bool aead = cipher_traits(cipher).aead;
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  if (!ctx) fail("EVP_CIPHER_CTX_new");
  const int enc = encrypt ? 1 : 0;
  if (EVP_CipherInit_ex(ctx.get(), evp_cipher(cipher), nullptr, nullptr, nullptr, enc) != 1) fail("EVP_CipherInit_ex");
  const std::uint8_t* nonce = iv.data();
  if (aead) {
    if (cipher == Cipher::chacha20_poly1305) nonce += 4;  // the 16-byte form's counter word is not part of it
    const int iv_len = cipher == Cipher::chacha20_poly1305 ? 12 : static_cast<int>(iv.size());
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN, iv_len, nullptr) != 1) fail("EVP_CTRL_AEAD_SET_IVLEN");
  }
  if (EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, key.data(), nonce, enc) != 1) fail("EVP_CipherInit_ex");
  if (aead && !encrypt && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, static_cast<int>(tag_bytes), tag) != 1)
    fail("EVP_CTRL_AEAD_SET_TAG");
  if (aead && !aad.empty()) update(ctx.get(), nullptr, aad.data(), aad.size());
  update(ctx.get(), out, in, bytes);
  std::uint8_t final_block[32];
  int written = 0;
  if (EVP_CipherFinal_ex(ctx.get(), final_block, &written) != 1) {
    if (aead && !encrypt) {
      ERR_clear_error();
      if (bytes != 0) OPENSSL_cleanse(out, bytes);
      return false;
    }
    fail("EVP_CipherFinal_ex");
  }
  if (aead && encrypt && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, static_cast<int>(tag_bytes), tag) != 1)
    fail("EVP_CTRL_AEAD_GET_TAG");
  return true;
}

bool evp_bulk(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in, std::uint8_t* out,
              std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes, unsigned threads) {
  const CipherTraits& traits = cipher_traits(cipher);
  // Ranges of at least 1 MiB, whole keystream blocks each.
  constexpr std::size_t min_range = std::size_t{1} << 20;
  const std::size_t ranges = std::min<std::size_t>(worker_count(threads), (bytes + min_range - 1) / min_range);
  if (traits.aead || ranges <= 1) return evp_message(cipher, encrypt, key, iv, aad, in, out, bytes, tag, tag_bytes);

  const std::size_t unit = traits.block_bytes;
  // ceil(bytes / ranges) rounded up to whole blocks: the ranges cover every byte (bytes / ranges
  // would drop the tail whenever it is already a whole number of blocks).
  const std::size_t range = ((bytes + ranges - 1) / ranges + unit - 1) / unit * unit;
  Iv16 base{};
  std::copy(iv.begin(), iv.end(), base.begin());
  std::exception_ptr error;
#pragma omp parallel for num_threads(static_cast <int>(ranges)) schedule(static)
  for (std::size_t r = 0; r < ranges; ++r) {
    const std::size_t at = r * range;
    if (at >= bytes) continue;
    try {
      const Iv16 part = keystream_iv_at(cipher, base, at / unit);
      evp_message(cipher, encrypt, key, part, {}, in + at, out + at, std::min(range, bytes - at), nullptr, 0);
    } catch (...) {
#pragma omp critical(opkit_cipher_error)
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return true;
}

std::vector<std::size_t> evp_batch(Cipher cipher, bool encrypt, const CipherBatch& batch,
                                   const std::vector<std::uint64_t>& offsets, const CheckedBatch& checked,
                                   const std::uint8_t* in, std::uint8_t* out, std::uint8_t* tags, unsigned threads) {
  const std::size_t key_bytes = cipher_traits(cipher).key_bytes;
  const auto count = static_cast<std::ptrdiff_t>(batch.count);
  std::vector<unsigned char> failed(batch.count, 0);
  std::exception_ptr error;
#pragma omp parallel for num_threads(static_cast <int>(worker_count(threads))) schedule(dynamic, 64)
  for (std::ptrdiff_t s = 0; s < count; ++s) {
    const auto i = static_cast<std::size_t>(s);
    try {
      const Bytes iv = is_gcm(cipher) ? batch.ivs.subspan(i * batch.iv_bytes, batch.iv_bytes) : Bytes(checked.ivs[i]);
      const Bytes aad = batch.aad_offsets.empty()
                            ? Bytes{}
                            : batch.aad.subspan(batch.aad_offsets[i], batch.aad_offsets[i + 1] - batch.aad_offsets[i]);
      const bool ok = evp_message(cipher, encrypt, batch.keys.subspan(i * key_bytes, key_bytes), iv, aad,
                                  in + offsets[i], out + offsets[i], offsets[i + 1] - offsets[i],
                                  tags ? tags + i * checked.tag_bytes : nullptr, checked.tag_bytes);
      failed[i] = ok ? 0 : 1;
    } catch (...) {
#pragma omp critical(opkit_cipher_error)
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < batch.count; ++i)
    if (failed[i]) indices.push_back(i);
  return indices;
}

}  // namespace opkit::ops::detail
