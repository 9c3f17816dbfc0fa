// OpenSSL EVP implementation of the cipher operators (see cipher_evp.hpp).
#include "cipher_evp.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <exception>

#include "evp_calls.hpp"

namespace opkit::ops::detail {

bool evp_message(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in, std::uint8_t* out,
                 std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes) {
  const bool aead = cipher_traits(cipher).aead;
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  if (!ctx) evp_fail("EVP_CIPHER_CTX_new");
  const int enc = encrypt ? 1 : 0;
  if (EVP_CipherInit_ex(ctx.get(), evp_cipher(cipher), nullptr, nullptr, nullptr, enc) != 1)
    evp_fail("EVP_CipherInit_ex");
  const std::uint8_t* nonce = iv.data();
  if (aead) {
    if (cipher == Cipher::chacha20_poly1305) nonce += 4;  // the 16-byte form's counter word is not part of it
    const int iv_len = cipher == Cipher::chacha20_poly1305 ? 12 : static_cast<int>(iv.size());
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN, iv_len, nullptr) != 1)
      evp_fail("EVP_CTRL_AEAD_SET_IVLEN");
  }
  if (EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, key.data(), nonce, enc) != 1) evp_fail("EVP_CipherInit_ex");
  if (aead && !encrypt && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, static_cast<int>(tag_bytes), tag) != 1)
    evp_fail("EVP_CTRL_AEAD_SET_TAG");
  if (aead && !aad.empty()) evp_update(ctx.get(), nullptr, aad.data(), aad.size());
  evp_update(ctx.get(), out, in, bytes);
  std::uint8_t final_block[32];
  int written = 0;
  if (EVP_CipherFinal_ex(ctx.get(), final_block, &written) != 1) {
    if (aead && !encrypt) {
      ERR_clear_error();
      if (bytes != 0) OPENSSL_cleanse(out, bytes);
      return false;
    }
    evp_fail("EVP_CipherFinal_ex");
  }
  if (aead && encrypt && EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, static_cast<int>(tag_bytes), tag) != 1)
    evp_fail("EVP_CTRL_AEAD_GET_TAG");
  return true;
}

bool evp_bulk(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in, std::uint8_t* out,
              std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes, unsigned threads) {
  const CipherTraits& traits = cipher_traits(cipher);
  // Ranges of at least 1 MiB, whole keystream blocks each.
  constexpr std::size_t min_range = std::size_t{1} << 20;
  const std::size_t ranges = std::min<std::size_t>(worker_count(threads), (bytes + min_range - 1) / min_range);
  if (ranges <= 1) return evp_message(cipher, encrypt, key, iv, aad, in, out, bytes, tag, tag_bytes);
  if (traits.aead) return evp_aead_over_cores(cipher, encrypt, key, iv, aad, in, out, bytes, tag, tag_bytes, ranges);

  const std::size_t unit = traits.block_bytes;
  Iv16 base{};
  std::copy(iv.begin(), iv.end(), base.begin());
  over_ranges(bytes, range_bytes(bytes, ranges, unit), [&](std::size_t at, std::size_t n) {
    evp_message(cipher, encrypt, key, keystream_iv_at(cipher, base, at / unit), {}, in + at, out + at, n, nullptr, 0);
  });
  return true;
}

std::vector<std::size_t> evp_batch(Cipher cipher, bool encrypt, const CipherBatch& batch, const BatchBounds& bounds,
                                   const CheckedBatch& checked, const std::uint8_t* in, std::uint8_t* out,
                                   std::uint8_t* tags, unsigned threads) {
  const std::size_t key_bytes = cipher_traits(cipher).key_bytes;
  const auto count = static_cast<std::ptrdiff_t>(batch.count);
  std::vector<unsigned char> failed(batch.count, 0);
  std::exception_ptr error;
#pragma omp parallel for num_threads(static_cast <int>(worker_count(threads))) schedule(dynamic, 64)
  for (std::ptrdiff_t s = 0; s < count; ++s) {
    const auto i = static_cast<std::size_t>(s);
    try {
      const Iv16 iv16 = checked.iv(i);
      const Bytes iv = is_gcm(cipher) ? batch.ivs.subspan(i * batch.iv_bytes, batch.iv_bytes) : Bytes(iv16);
      const Bytes aad = batch.aad_offsets.empty()
                            ? Bytes{}
                            : batch.aad.subspan(batch.aad_offsets[i], batch.aad_offsets[i + 1] - batch.aad_offsets[i]);
      const bool ok = evp_message(cipher, encrypt, batch.keys.subspan(i * key_bytes, key_bytes), iv, aad,
                                  in + bounds.begin(i), out + bounds.begin(i), bounds.size(i),
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
