// Test support for the AES device kernels: OpenSSL EVP as the independent reference, the
// checked-in NIST vectors, and device round trips. Used by the CPU-backend unit tests and the
// GPU tests alike (each passes its device).
#pragma once

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "ops/cipher/aes_device.hpp"

namespace opkit::test::aes {

using Bytes = std::vector<std::uint8_t>;

inline Bytes from_hex(const std::string& hex) {
  Bytes out;
  if (hex == "-") return out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

inline Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// Whitespace-separated fields of each non-comment line of tests/data/<name>.
inline std::vector<std::vector<std::string>> read_vectors(const std::string& name) {
  std::ifstream in(std::string(OPKIT_TEST_DATA_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << "cannot read tests/data/" << name;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> row;
    for (std::string f; fields >> f;) row.push_back(f);
    rows.push_back(row);
  }
  return rows;
}

inline const EVP_CIPHER* evp_ctr(std::size_t key_bytes) {
  return key_bytes == 16 ? EVP_aes_128_ctr() : key_bytes == 24 ? EVP_aes_192_ctr() : EVP_aes_256_ctr();
}
inline const EVP_CIPHER* evp_gcm(std::size_t key_bytes) {
  return key_bytes == 16 ? EVP_aes_128_gcm() : key_bytes == 24 ? EVP_aes_192_gcm() : EVP_aes_256_gcm();
}

inline Bytes openssl_ctr(const Bytes& key, const Bytes& counter, const Bytes& in) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes out(in.size() + 16);
  int n = 0, tail = 0;
  EVP_EncryptInit_ex(ctx, evp_ctr(key.size()), nullptr, key.data(), counter.data());
  EVP_EncryptUpdate(ctx, out.data(), &n, in.data(), static_cast<int>(in.size()));
  EVP_EncryptFinal_ex(ctx, out.data() + n, &tail);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(static_cast<std::size_t>(n) + static_cast<std::size_t>(tail));
  return out;
}

// Ciphertext followed by the full 16-byte tag.
inline Bytes openssl_gcm_seal(const Bytes& key, const Bytes& iv, const Bytes& aad, const Bytes& in) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes out(in.size() + 32);
  int n = 0, tail = 0;
  EVP_EncryptInit_ex(ctx, evp_gcm(key.size()), nullptr, nullptr, nullptr);
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr);
  EVP_EncryptInit_ex(ctx, nullptr, nullptr, key.data(), iv.data());
  if (!aad.empty()) EVP_EncryptUpdate(ctx, nullptr, &n, aad.data(), static_cast<int>(aad.size()));
  EVP_EncryptUpdate(ctx, out.data(), &n, in.data(), static_cast<int>(in.size()));
  EVP_EncryptFinal_ex(ctx, out.data() + n, &tail);
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out.data() + n + tail);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(static_cast<std::size_t>(n + tail) + 16);
  return out;
}

inline DeviceBuffer<std::uint8_t> upload(const Device& device, const Bytes& host) {
  DeviceBuffer<std::uint8_t> buffer = device.alloc<std::uint8_t>(host.size());
  if (!host.empty()) buffer.copy_from(std::span<const std::uint8_t>(host));
  return buffer;
}

inline Bytes download(const DeviceBuffer<std::uint8_t>& buffer) {
  return buffer.to_host();
}

// Device CTR of `in` (a fresh buffer, or in place), to the host.
inline Bytes device_ctr(const Device& device, const Bytes& key, const Bytes& counter, const Bytes& in,
                        bool in_place = false, std::size_t misalign = 0) {
  Bytes padded(misalign, 0);
  padded.insert(padded.end(), in.begin(), in.end());
  DeviceBuffer<std::uint8_t> src = upload(device, padded);
  DeviceBuffer<std::uint8_t> dst = device.alloc<std::uint8_t>(in.size() + misalign);
  BufferView<std::uint8_t> in_view = src.view().subview(misalign, in.size());
  BufferView<std::uint8_t> out_view = in_place ? in_view : dst.view().subview(misalign, in.size());
  ops::aes::aes_ctr_xor(device, key, std::span<const std::uint8_t, 16>(counter.data(), 16), in_view, out_view);
  Bytes out = in_place ? download(src) : download(dst);
  return Bytes(out.begin() + static_cast<std::ptrdiff_t>(misalign), out.end());
}

struct Sealed {
  Bytes ciphertext, tag;
};

inline Sealed device_gcm_seal(const Device& device, const Bytes& key, const Bytes& iv, const Bytes& aad,
                              const Bytes& in, std::size_t tag_bytes = 16) {
  auto a = upload(device, aad);
  auto src = upload(device, in);
  auto dst = device.alloc<std::uint8_t>(in.size());
  auto tag = device.alloc<std::uint8_t>(tag_bytes);
  ops::aes::aes_gcm_seal(device, key, iv, a, src, dst, tag);
  return {download(dst), download(tag)};
}

// Opens in place; returns whether the tag matched and leaves the buffer's bytes in `text`.
inline bool device_gcm_open(const Device& device, const Bytes& key, const Bytes& iv, const Bytes& aad, Bytes& text,
                            const Bytes& tag) {
  auto a = upload(device, aad);
  auto buf = upload(device, text);
  auto t = upload(device, tag);
  const bool ok = ops::aes::aes_gcm_open(device, key, iv, a, buf, buf, t);
  text = download(buf);
  return ok;
}

// ---- Checks shared by the CPU-backend and GPU tests -------------------------------------------

inline void check_ctr_vectors(const Device& device) {
  for (const auto& row : read_vectors("aes-ctr-sp800-38a.txt")) {
    const Bytes key = from_hex(row[1]), ctr = from_hex(row[2]), pt = from_hex(row[3]), ct = from_hex(row[4]);
    EXPECT_EQ(device_ctr(device, key, ctr, pt), ct) << row[0] << " encrypt";
    EXPECT_EQ(device_ctr(device, key, ctr, ct), pt) << row[0] << " decrypt";
  }
}

inline void check_gcm_vectors(const Device& device) {
  for (const auto& row : read_vectors("aes-gcm-vectors.txt")) {
    const Bytes key = from_hex(row[1]), iv = from_hex(row[2]), aad = from_hex(row[3]), pt = from_hex(row[4]),
                ct = from_hex(row[5]), tag = from_hex(row[6]);
    for (std::size_t tag_bytes : {16, 12, 8, 4}) {
      const Bytes want_tag(tag.begin(), tag.begin() + static_cast<std::ptrdiff_t>(tag_bytes));
      const Sealed s = device_gcm_seal(device, key, iv, aad, pt, tag_bytes);
      EXPECT_EQ(s.ciphertext, ct) << row[0];
      EXPECT_EQ(s.tag, want_tag) << row[0] << " tag of " << tag_bytes << " bytes";
      Bytes text = ct;
      EXPECT_TRUE(device_gcm_open(device, key, iv, aad, text, want_tag)) << row[0];
      EXPECT_EQ(text, pt) << row[0];
      // A flipped tag bit fails and releases nothing: the buffer still holds the ciphertext.
      Bytes bad_tag = want_tag;
      bad_tag[tag_bytes - 1] ^= 0x80;
      text = ct;
      EXPECT_FALSE(device_gcm_open(device, key, iv, aad, text, bad_tag)) << row[0];
      EXPECT_EQ(text, ct) << row[0];
    }
  }
}

// Random keys / counters / IVs / AAD against OpenSSL for every length in `lengths`.
inline void check_against_openssl(const Device& device, const std::vector<std::size_t>& lengths, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (std::size_t len : lengths) {
    const std::size_t key_bytes = std::size_t{16} + 8 * (rng() % 3);
    const Bytes key = random_bytes(rng, key_bytes), ctr = random_bytes(rng, 16), pt = random_bytes(rng, len);
    const std::size_t misalign = rng() % 4 == 0 ? 1 + rng() % 15 : 0;
    EXPECT_EQ(device_ctr(device, key, ctr, pt, rng() % 2 == 0, misalign), openssl_ctr(key, ctr, pt))
        << "CTR, " << key_bytes << "-byte key, length " << len << ", misaligned by " << misalign;

    const std::size_t iv_bytes = rng() % 3 == 0 ? 1 + rng() % 40 : 12;
    const Bytes iv = random_bytes(rng, iv_bytes), aad = random_bytes(rng, rng() % 3 == 0 ? 0 : rng() % 80);
    const Bytes want = openssl_gcm_seal(key, iv, aad, pt);
    const Sealed s = device_gcm_seal(device, key, iv, aad, pt);
    EXPECT_EQ(s.ciphertext, Bytes(want.begin(), want.end() - 16)) << "GCM, length " << len << ", IV " << iv_bytes;
    EXPECT_EQ(s.tag, Bytes(want.end() - 16, want.end())) << "GCM tag, length " << len << ", IV " << iv_bytes;
    Bytes text = s.ciphertext;
    EXPECT_TRUE(device_gcm_open(device, key, iv, aad, text, s.tag)) << "length " << len;
    EXPECT_EQ(text, pt) << "length " << len;
    if (!aad.empty()) {  // a flipped AAD bit fails
      Bytes bad_aad = aad;
      bad_aad[rng() % bad_aad.size()] ^= 1;
      text = s.ciphertext;
      EXPECT_FALSE(device_gcm_open(device, key, iv, bad_aad, text, s.tag)) << "length " << len;
    }
    if (len > 0) {  // a flipped ciphertext bit fails, and the buffer keeps the ciphertext
      Bytes bad = s.ciphertext;
      bad[rng() % len] ^= 4;
      text = bad;
      EXPECT_FALSE(device_gcm_open(device, key, iv, aad, text, s.tag)) << "length " << len;
      EXPECT_EQ(text, bad);
    }
  }
}

// CTR counters that carry across 2^32, 2^64 and wrap at 2^128 inside one message.
inline void check_ctr_carries(const Device& device, std::size_t len) {
  std::mt19937_64 rng(17);
  const Bytes key = random_bytes(rng, 32), pt = random_bytes(rng, len);
  for (int boundary : {32, 64, 128}) {
    for (unsigned below : {1u, 5u, 33u, 700u}) {
      Bytes ctr = random_bytes(rng, 16);
      for (int bit = 0; bit < boundary; ++bit) ctr[15 - bit / 8] |= static_cast<std::uint8_t>(1u << (bit % 8));
      // Now the low `boundary` bits are all ones; step back so that `below` blocks precede the carry.
      unsigned d = below - 1, borrow = 0;
      for (int i = 15; i >= 0; --i) {
        const int v = static_cast<int>(ctr[i]) - static_cast<int>((d & 0xff) + borrow);
        d >>= 8;
        borrow = v < 0 ? 1 : 0;
        ctr[i] = static_cast<std::uint8_t>(v + 256);
      }
      EXPECT_EQ(device_ctr(device, key, ctr, pt), openssl_ctr(key, ctr, pt))
          << "carry at 2^" << boundary << ", " << below << " blocks before it";
    }
  }
}

// Batch CTR and GCM (seal, then open with some messages tampered) against OpenSSL per message.
// variable: messages of random lengths through offsets; else all of `fixed` bytes.
inline void check_batch(const Device& device, std::size_t count, bool variable, std::size_t fixed,
                        std::size_t key_bytes, std::size_t iv_bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> offsets{0}, aad_offsets{0};
  Bytes data, aad, keys = random_bytes(rng, count * key_bytes), ctrs = random_bytes(rng, count * 16),
                   ivs = random_bytes(rng, count * iv_bytes);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t len = variable ? rng() % 300 : fixed;
    const Bytes m = random_bytes(rng, len), a = random_bytes(rng, variable ? rng() % 40 : 13);
    data.insert(data.end(), m.begin(), m.end());
    aad.insert(aad.end(), a.begin(), a.end());
    offsets.push_back(data.size());
    aad_offsets.push_back(aad.size());
  }
  auto slice = [](const Bytes& b, std::size_t at, std::size_t n) {
    return Bytes(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
  };
  auto d_offsets = device.alloc<std::uint64_t>(offsets.size());
  d_offsets.copy_from(std::span<const std::uint64_t>(offsets));
  auto d_aad_offsets = device.alloc<std::uint64_t>(aad_offsets.size());
  d_aad_offsets.copy_from(std::span<const std::uint64_t>(aad_offsets));
  ops::aes::BatchLayout layout{count, fixed, std::nullopt}, aad_layout{count, 13, std::nullopt};
  if (variable) {
    layout.offsets = BufferView<const std::uint64_t>(d_offsets.view());
    aad_layout.offsets = BufferView<const std::uint64_t>(d_aad_offsets.view());
  }
  auto d_keys = upload(device, keys), d_ctrs = upload(device, ctrs), d_ivs = upload(device, ivs);
  auto d_data = upload(device, data), d_aad = upload(device, aad);
  auto d_out = device.alloc<std::uint8_t>(std::max<std::size_t>(data.size(), 1));
  auto out_view = d_out.view().subview(0, data.size());

  ops::aes::aes_ctr_xor_batch(device, key_bytes, d_keys, d_ctrs, layout, d_data, out_view);
  const Bytes ctr_out = download(d_out);
  for (std::size_t i = 0; i < count; ++i)
    EXPECT_EQ(slice(ctr_out, offsets[i], offsets[i + 1] - offsets[i]),
              openssl_ctr(slice(keys, i * key_bytes, key_bytes), slice(ctrs, 16 * i, 16),
                          slice(data, offsets[i], offsets[i + 1] - offsets[i])))
        << "CTR batch message " << i;

  auto d_tags = device.alloc<std::uint8_t>(count * 16);
  ops::aes::aes_gcm_seal_batch(device, key_bytes, d_keys, iv_bytes, d_ivs, d_aad, aad_layout, layout, d_data, out_view,
                               16, d_tags);
  Bytes sealed = download(d_out), tags = download(d_tags);
  for (std::size_t i = 0; i < count; ++i) {
    const Bytes want = openssl_gcm_seal(slice(keys, i * key_bytes, key_bytes), slice(ivs, i * iv_bytes, iv_bytes),
                                        slice(aad, aad_offsets[i], aad_offsets[i + 1] - aad_offsets[i]),
                                        slice(data, offsets[i], offsets[i + 1] - offsets[i]));
    EXPECT_EQ(slice(sealed, offsets[i], offsets[i + 1] - offsets[i]), Bytes(want.begin(), want.end() - 16))
        << "GCM batch message " << i;
    EXPECT_EQ(slice(tags, 16 * i, 16), Bytes(want.end() - 16, want.end())) << "GCM batch tag " << i;
  }

  // Tamper with a tag, and with a ciphertext byte where the message has one; open into a fresh
  // buffer filled with 0xee: the failing messages' bytes must stay 0xee.
  std::vector<std::size_t> expect_failed;
  for (std::size_t i = 0; i < count; i += 5) {
    if (i % 2 == 0)
      tags[16 * i + rng() % 16] ^= 1;
    else if (offsets[i + 1] > offsets[i])
      sealed[offsets[i] + rng() % (offsets[i + 1] - offsets[i])] ^= 0x10;
    else
      tags[16 * i] ^= 2;
    expect_failed.push_back(i);
  }
  auto d_sealed = upload(device, sealed), d_bad_tags = upload(device, tags);
  auto d_plain = upload(device, Bytes(std::max<std::size_t>(data.size(), 1), 0xee));
  const auto failed = ops::aes::aes_gcm_open_batch(device, key_bytes, d_keys, iv_bytes, d_ivs, d_aad, aad_layout,
                                                   layout, d_sealed.view().subview(0, data.size()),
                                                   d_plain.view().subview(0, data.size()), 16, d_bad_tags);
  EXPECT_EQ(failed, expect_failed);
  const Bytes plain = download(d_plain);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t n = offsets[i + 1] - offsets[i];
    const bool bad = std::find(expect_failed.begin(), expect_failed.end(), i) != expect_failed.end();
    EXPECT_EQ(slice(plain, offsets[i], n), bad ? Bytes(n, 0xee) : slice(data, offsets[i], n)) << "opened message " << i;
  }
}

}  // namespace opkit::test::aes
