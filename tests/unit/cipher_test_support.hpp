// Shared pieces of the cipher tests: the checked-in vectors (tests/data/cipher-vectors.txt), fresh
// random inputs, and an independent reference (OpenSSL EVP called directly, one message at a
// time, no opkit code involved).
#pragma once

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "opkit/ops/cipher.hpp"

namespace cipher_test {

using Bytes = std::vector<std::uint8_t>;

inline Bytes from_hex(const std::string& hex) {
  if (hex == "-") return {};
  Bytes out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

struct Vector {
  std::string cipher;
  Bytes key, iv, aad, plaintext, ciphertext, tag;
  bool fail = false;
  int line = 0;
};

inline std::vector<Vector> load_vectors() {
  std::ifstream in(std::string(OPKIT_TEST_DATA_DIR) + "/cipher-vectors.txt");
  EXPECT_TRUE(in) << "tests/data/cipher-vectors.txt is missing";
  std::vector<Vector> vectors;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Vector v;
    std::string key, iv, aad, p, c, tag, flag;
    fields >> v.cipher >> key >> iv >> aad >> p >> c >> tag >> flag;
    v.key = from_hex(key), v.iv = from_hex(iv), v.aad = from_hex(aad), v.plaintext = from_hex(p);
    v.ciphertext = from_hex(c), v.tag = from_hex(tag), v.fail = flag == "FAIL", v.line = n;
    vectors.push_back(std::move(v));
  }
  return vectors;
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

inline Bytes random_bytes(std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng()());
  return out;
}

inline std::size_t random_below(std::size_t n) {
  return static_cast<std::size_t>(rng()() % n);
}

// A fresh IV of the length opkit's API takes for this cipher (GCM: 12 bytes, or any length 1..64).
inline Bytes random_iv(opkit::ops::Cipher cipher, bool odd_gcm_nonce = false) {
  using opkit::ops::Cipher;
  switch (cipher) {
    case Cipher::aes_128_gcm:
    case Cipher::aes_192_gcm:
    case Cipher::aes_256_gcm:
      return random_bytes(odd_gcm_nonce ? 1 + random_below(64) : 12);
    case Cipher::chacha20_poly1305:
      return random_bytes(12);
    case Cipher::chacha20: {
      Bytes iv = random_bytes(16);
      iv[3] = 0;  // counter below 2^24: room for MiB messages in the 32-bit counter
      return iv;
    }
    default:
      return random_bytes(16);
  }
}

struct Sealed {
  Bytes data, tag;
};

// OpenSSL EVP, directly: the reference every path is compared with.
inline Sealed reference_encrypt(opkit::ops::Cipher cipher, const Bytes& key, const Bytes& iv, const Bytes& aad,
                                const Bytes& plaintext, std::size_t tag_bytes = 16) {
  const std::string name(opkit::ops::cipher_traits(cipher).name);
  const bool aead = opkit::ops::cipher_traits(cipher).aead;
  EVP_CIPHER* evp = EVP_CIPHER_fetch(nullptr, name.c_str(), nullptr);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Sealed out{Bytes(plaintext.size()), Bytes(aead ? tag_bytes : 0)};
  int n = 0;
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, evp, nullptr, nullptr, nullptr), 1);
  if (aead) {
    EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, static_cast<int>(iv.size()), nullptr), 1);
  }
  EXPECT_EQ(EVP_EncryptInit_ex(ctx, nullptr, nullptr, key.data(), iv.data()), 1);
  if (!aad.empty()) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx, nullptr, &n, aad.data(), static_cast<int>(aad.size())), 1);
  }
  if (!plaintext.empty()) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx, out.data.data(), &n, plaintext.data(), static_cast<int>(plaintext.size())), 1);
  }
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, out.data.data() + plaintext.size(), &n), 1);
  if (aead) {
    EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(tag_bytes), out.tag.data()), 1);
  }
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(evp);
  return out;
}

}  // namespace cipher_test
