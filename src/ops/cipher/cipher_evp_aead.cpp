// AEAD messages over all cores with OpenSSL EVP (evp_aead_over_cores, cipher_evp.hpp). An EVP
// GCM or ChaCha20-Poly1305 context runs a message on one core (6.1 and 2.6 GB/s for 1 GiB on the
// H200 machine's host, 2026-12-03); here each is split into ranges:
//
// GCM with a 96-bit nonce: the keystream is AES-CTR from counter block nonce || 2, so each range
// is encrypted by EVP's CTR from its own counter. GHASH is linear in its blocks, GHASH(A || B) =
// GHASH(A)·H^|B| ⊕ GHASH(B), so each range's GHASH is found on its own core and moved into place
// by a power of H. EVP has no GHASH call, but a GCM tag over X given as AAD alone (zero nonce, no
// plaintext) is E_K(0^96 || 1) ⊕ (GHASH(X) ⊕ L)·H with L = [8|X|]_64 || 0^64, which gives
// GHASH(X)·H with one field multiplication; the combination needs nothing else. That is a few
// dozen multiplications per message, done here bit-serially without branches or tables (H is
// secret).
//
// ChaCha20-Poly1305: the keystream from block counter 1 over ranges (EVP ChaCha20 with the counter
// word set), Poly1305 (RFC 8439 §2.8's layout) in one pass by EVP_MAC: its value mod 2^130 - 5 is
// not visible through EVP, so ranges cannot be combined; it runs at several times ChaCha20's
// one-core rate.
//
// Decryption computes the tag from the ciphertext first and writes plaintext only after it
// matched (a mismatch zeroes out, as one-core EVP decryption does).
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "cipher_evp.hpp"
#include "evp_calls.hpp"

namespace opkit::ops::detail {
namespace {

constexpr std::size_t gcm_block = 16;

// A GCM field element as two big-endian 64-bit halves: the field's x^0 is the top bit of hi.
struct Gf128 {
  std::uint64_t hi = 0, lo = 0;
};

Gf128 operator^(Gf128 a, Gf128 b) { return {a.hi ^ b.hi, a.lo ^ b.lo}; }

Gf128 load(const std::uint8_t* p) {
  Gf128 x;
  for (int i = 0; i < 8; ++i) {
    x.hi = x.hi << 8 | p[i];
    x.lo = x.lo << 8 | p[8 + i];
  }
  return x;
}

void store(Gf128 x, std::uint8_t* p) {
  for (int i = 0; i < 8; ++i) {
    p[i] = static_cast<std::uint8_t>(x.hi >> (56 - 8 * i));
    p[8 + i] = static_cast<std::uint8_t>(x.lo >> (56 - 8 * i));
  }
}

// SP 800-38D algorithm 1, with masks where it branches: the time does not depend on x or y.
Gf128 multiply(Gf128 x, Gf128 y) {
  Gf128 z, v = y;
  for (int i = 0; i < 128; ++i) {
    const std::uint64_t bit = (i < 64 ? x.hi >> (63 - i) : x.lo >> (127 - i)) & 1;
    const std::uint64_t take = 0 - bit;
    z.hi ^= v.hi & take;
    z.lo ^= v.lo & take;
    const std::uint64_t carry = 0 - (v.lo & 1);
    v.lo = v.lo >> 1 | v.hi << 63;
    v.hi = (v.hi >> 1) ^ (0xE100000000000000ull & carry);
  }
  return z;
}

// h^n by squaring; n is a block count (public), h secret.
Gf128 power(Gf128 h, std::uint64_t n) {
  Gf128 result{std::uint64_t{1} << 63, 0};  // the field's 1
  for (; n != 0; n >>= 1) {
    if (n & 1) result = multiply(result, h);
    h = multiply(h, h);
  }
  return result;
}

Cipher ctr_of(Cipher gcm) {
  switch (gcm) {
    case Cipher::aes_128_gcm:
      return Cipher::aes_128_ctr;
    case Cipher::aes_192_gcm:
      return Cipher::aes_192_ctr;
    default:
      return Cipher::aes_256_ctr;
  }
}

const EVP_CIPHER* ecb_of(Cipher gcm) {
  switch (gcm) {
    case Cipher::aes_128_gcm:
      return EVP_aes_128_ecb();
    case Cipher::aes_192_gcm:
      return EVP_aes_192_ecb();
    default:
      return EVP_aes_256_ecb();
  }
}

// The key's values every range needs; wiped when the message is done.
struct GcmSecrets {
  Gf128 h;            // E_K(0^128)
  Gf128 ej0;          // E_K(nonce || 1): masks the message's tag
  Gf128 ej0_zero;     // E_K(0^96 || 1): masks the tags of the GHASH-only runs
  Gf128 h_range;      // H^(blocks per range)
  ~GcmSecrets() { OPENSSL_cleanse(this, sizeof *this); }
};

Gf128 encrypt_block(Cipher gcm, Bytes key, const std::array<std::uint8_t, 16>& block) {
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), ecb_of(gcm), nullptr, key.data(), nullptr) != 1)
    evp_fail("EVP_EncryptInit_ex");
  EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
  std::array<std::uint8_t, 16> out{};
  int written = 0;
  if (EVP_EncryptUpdate(ctx.get(), out.data(), &written, block.data(), 16) != 1) evp_fail("EVP_EncryptUpdate");
  const Gf128 value = load(out.data());
  OPENSSL_cleanse(out.data(), out.size());
  return value;
}

// GHASH_H(x, zero-padded to whole blocks)·H, from the GCM tag of x as AAD alone.
Gf128 ghash_times_h(Cipher gcm, Bytes key, const GcmSecrets& secrets, const std::uint8_t* x, std::size_t bytes) {
  if (bytes == 0) return {};
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  const std::array<std::uint8_t, 12> zero_nonce{};
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), evp_cipher(gcm), nullptr, key.data(), zero_nonce.data()) != 1)
    evp_fail("EVP_EncryptInit_ex");
  evp_update(ctx.get(), nullptr, x, bytes);
  std::array<std::uint8_t, 16> tag{};
  int written = 0;
  if (EVP_EncryptFinal_ex(ctx.get(), tag.data(), &written) != 1) evp_fail("EVP_EncryptFinal_ex");
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, 16, tag.data()) != 1) evp_fail("EVP_CTRL_AEAD_GET_TAG");
  const Gf128 lengths{static_cast<std::uint64_t>(bytes) * 8, 0};
  const Gf128 value = load(tag.data()) ^ secrets.ej0_zero ^ multiply(lengths, secrets.h);
  OPENSSL_cleanse(tag.data(), tag.size());
  return value;
}

bool finish(bool encrypt, std::array<std::uint8_t, 16>& computed, std::uint8_t* tag, std::size_t tag_bytes,
            std::uint8_t* out, std::size_t bytes) {
  bool ok = true;
  if (encrypt)
    std::copy_n(computed.begin(), tag_bytes, tag);
  else
    ok = CRYPTO_memcmp(computed.data(), tag, tag_bytes) == 0;
  OPENSSL_cleanse(computed.data(), computed.size());
  if (!ok && bytes != 0) OPENSSL_cleanse(out, bytes);
  return ok;
}

bool gcm_over_cores(Cipher cipher, bool encrypt, Bytes key, Bytes nonce, Bytes aad, const std::uint8_t* in,
                    std::uint8_t* out, std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes,
                    std::size_t ranges) {
  GcmSecrets secrets;
  std::array<std::uint8_t, 16> block{};
  secrets.h = encrypt_block(cipher, key, block);
  block[15] = 1;
  secrets.ej0_zero = encrypt_block(cipher, key, block);
  std::copy(nonce.begin(), nonce.end(), block.begin());
  secrets.ej0 = encrypt_block(cipher, key, block);
  Iv16 first_counter = block;  // nonce || 2: the first keystream block
  first_counter[15] = 2;

  const std::size_t range = range_bytes(bytes, ranges, gcm_block);
  const std::size_t range_blocks = range / gcm_block;
  secrets.h_range = power(secrets.h, range_blocks);
  const Cipher ctr = ctr_of(cipher);
  const auto keystream = [&](std::size_t at, std::size_t n) {
    evp_message(ctr, true, key, keystream_iv_at(ctr, first_counter, at / gcm_block), {}, in + at, out + at, n,
                nullptr, 0);
  };
  std::vector<Gf128> parts((bytes + range - 1) / range);  // each range's GHASH·H
  over_ranges(bytes, range, [&](std::size_t at, std::size_t n) {
    if (encrypt) keystream(at, n);
    parts[at / range] = ghash_times_h(cipher, key, secrets, (encrypt ? out : in) + at, n);
  });

  // Horner over the segments AAD, range 0, range 1, ...: acc = acc·H^(blocks of the next) ⊕ it.
  Gf128 acc = ghash_times_h(cipher, key, secrets, aad.data(), aad.size());
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const std::size_t blocks = (std::min(range, bytes - j * range) + gcm_block - 1) / gcm_block;
    acc = multiply(acc, blocks == range_blocks ? secrets.h_range : power(secrets.h, blocks)) ^ parts[j];
  }
  const Gf128 lengths{static_cast<std::uint64_t>(aad.size()) * 8, static_cast<std::uint64_t>(bytes) * 8};
  std::array<std::uint8_t, 16> computed{};
  store(secrets.ej0 ^ acc ^ multiply(lengths, secrets.h), computed.data());
  OPENSSL_cleanse(parts.data(), parts.size() * sizeof(Gf128));
  OPENSSL_cleanse(&acc, sizeof acc);

  if (!finish(encrypt, computed, tag, tag_bytes, out, bytes)) return false;
  if (!encrypt) over_ranges(bytes, range, keystream);
  return true;
}

using Mac = std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)>;

// RFC 8439 §2.8: Poly1305 over AAD || pad16 || ciphertext || pad16 || le64(|AAD|) || le64(|C|).
void poly1305_aead_tag(EVP_MAC* mac, const std::array<std::uint8_t, 32>& one_time_key, Bytes aad,
                       const std::uint8_t* ciphertext, std::size_t bytes, std::array<std::uint8_t, 16>& tag) {
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(EVP_MAC_CTX_new(mac), EVP_MAC_CTX_free);
  if (!ctx || EVP_MAC_init(ctx.get(), one_time_key.data(), one_time_key.size(), nullptr) != 1)
    evp_fail("EVP_MAC_init(POLY1305)");
  const std::array<std::uint8_t, 16> zeros{};
  const auto feed = [&](const std::uint8_t* p, std::size_t n) {
    if (n != 0 && EVP_MAC_update(ctx.get(), p, n) != 1) evp_fail("EVP_MAC_update(POLY1305)");
  };
  feed(aad.data(), aad.size());
  feed(zeros.data(), (16 - aad.size() % 16) % 16);
  feed(ciphertext, bytes);
  feed(zeros.data(), (16 - bytes % 16) % 16);
  std::array<std::uint8_t, 16> lengths{};
  for (int i = 0; i < 8; ++i) {
    lengths[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(aad.size()) >> (8 * i));
    lengths[8 + i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(bytes) >> (8 * i));
  }
  feed(lengths.data(), lengths.size());
  std::size_t written = 0;
  if (EVP_MAC_final(ctx.get(), tag.data(), &written, tag.size()) != 1 || written != tag.size())
    evp_fail("EVP_MAC_final(POLY1305)");
}

bool chacha20_poly1305_over_cores(EVP_MAC* mac, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in,
                                  std::uint8_t* out, std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes,
                                  std::size_t ranges) {
  constexpr std::size_t chacha_block = 64;
  Iv16 counter_zero{};  // le32(0) || the 12-byte nonce (the 16-byte form's counter word is not used)
  std::copy(iv.begin() + 4, iv.end(), counter_zero.begin() + 4);
  std::array<std::uint8_t, 32> one_time_key{};  // the first 32 bytes of block 0's keystream
  evp_message(Cipher::chacha20, true, key, counter_zero, {}, one_time_key.data(), one_time_key.data(),
              one_time_key.size(), nullptr, 0);
  const Iv16 counter_one = keystream_iv_at(Cipher::chacha20, counter_zero, 1);
  const std::size_t range = range_bytes(bytes, ranges, chacha_block);
  const auto keystream = [&](std::size_t at, std::size_t n) {
    evp_message(Cipher::chacha20, true, key, keystream_iv_at(Cipher::chacha20, counter_one, at / chacha_block), {},
                in + at, out + at, n, nullptr, 0);
  };
  if (encrypt) over_ranges(bytes, range, keystream);
  std::array<std::uint8_t, 16> computed{};
  try {
    poly1305_aead_tag(mac, one_time_key, aad, encrypt ? out : in, bytes, computed);
  } catch (...) {
    OPENSSL_cleanse(one_time_key.data(), one_time_key.size());
    throw;
  }
  OPENSSL_cleanse(one_time_key.data(), one_time_key.size());
  if (!finish(encrypt, computed, tag, tag_bytes, out, bytes)) return false;
  if (!encrypt) over_ranges(bytes, range, keystream);
  return true;
}

}  // namespace

bool evp_aead_over_cores(Cipher cipher, bool encrypt, Bytes key, Bytes iv, Bytes aad, const std::uint8_t* in,
                         std::uint8_t* out, std::size_t bytes, std::uint8_t* tag, std::size_t tag_bytes,
                         std::size_t ranges) {
  if (is_gcm(cipher)) {
    if (iv.size() != 12)  // J0 = GHASH(IV): its counter word may wrap within the message; one core
      return evp_message(cipher, encrypt, key, iv, aad, in, out, bytes, tag, tag_bytes);
    return gcm_over_cores(cipher, encrypt, key, iv, aad, in, out, bytes, tag, tag_bytes, ranges);
  }
  const Mac mac(EVP_MAC_fetch(nullptr, OSSL_MAC_NAME_POLY1305, nullptr), EVP_MAC_free);
  if (!mac) {  // a provider without Poly1305 as a MAC (EVP's AEAD still has it): one core
    ERR_clear_error();
    return evp_message(cipher, encrypt, key, iv, aad, in, out, bytes, tag, tag_bytes);
  }
  return chacha20_poly1305_over_cores(mac.get(), encrypt, key, iv, aad, in, out, bytes, tag, tag_bytes, ranges);
}

}  // namespace opkit::ops::detail
