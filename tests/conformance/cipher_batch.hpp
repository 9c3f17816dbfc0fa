// Random cipher batches for the conformance suites (test_cipher.cpp, test_cipher_device_keys.cpp):
// a key, IV and AAD per message, fixed length or offsets, and what OpenSSL makes of each message.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/ops/cipher.hpp"
#include "ops/cipher/aes_batch_io.hpp"
#include "unit/cipher_test_support.hpp"

namespace cipher_test {

// AES batches in slices of `messages` while it lives (2^18 by default), so that small batches run
// many slices, alternating between the call's stream and a side stream.
class SmallAesSlices {
 public:
  explicit SmallAesSlices(std::size_t messages) : saved_(opkit::ops::aes::batch_slice_messages()) {
    opkit::ops::aes::set_batch_slice_messages(messages);
  }
  ~SmallAesSlices() { opkit::ops::aes::set_batch_slice_messages(saved_); }
  SmallAesSlices(const SmallAesSlices&) = delete;
  SmallAesSlices& operator=(const SmallAesSlices&) = delete;

 private:
  std::size_t saved_;
};

inline bool aead(opkit::ops::Cipher c) {
  return opkit::ops::cipher_traits(c).aead;
}
inline std::string name(opkit::ops::Cipher c) {
  return std::string(opkit::ops::cipher_traits(c).name);
}

// What random_batch makes.
struct BatchShape {
  bool variable = false;     // random lengths with offsets, else one random fixed length
  std::size_t iv_bytes = 0;  // 0: 16 for CTR and chacha20, 12 for the AEADs
  bool aad = false;          // AAD of random length per message (AEADs)
  std::size_t count = 0;     // messages; 0: 1 to 40 at random
};

// A fresh batch: per-message keys, IVs and AAD; fixed length, or random lengths with offsets.
struct Batch {
  opkit::ops::Cipher cipher;
  std::size_t count, fixed_bytes;
  std::vector<std::uint64_t> offsets, aad_offsets;
  Bytes data, keys, ivs, aad;
  std::size_t iv_bytes;
  std::uint32_t chacha20_counter = 0;  // chacha20 with 12-byte nonces

  opkit::ops::CipherBatch view() const {
    return {.count = count,
            .message_bytes = fixed_bytes,
            .offsets = offsets,
            .keys = keys,
            .ivs = ivs,
            .iv_bytes = iv_bytes,
            .aad = aad,
            .aad_offsets = aad_offsets};
  }
  std::size_t key_bytes() const { return opkit::ops::cipher_traits(cipher).key_bytes; }
  std::uint64_t begin(std::size_t i) const { return offsets.empty() ? i * fixed_bytes : offsets[i]; }
  std::uint64_t end(std::size_t i) const { return offsets.empty() ? (i + 1) * fixed_bytes : offsets[i + 1]; }
  Bytes slice(const Bytes& bytes, std::size_t i) const {
    return Bytes(bytes.begin() + static_cast<std::ptrdiff_t>(begin(i)),
                 bytes.begin() + static_cast<std::ptrdiff_t>(end(i)));
  }
  Bytes part(const Bytes& bytes, std::size_t i, std::size_t width) const {
    return Bytes(bytes.begin() + static_cast<std::ptrdiff_t>(i * width),
                 bytes.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
  }
  Bytes message_aad(std::size_t i) const {
    if (aad_offsets.empty()) return {};
    return Bytes(aad.begin() + static_cast<std::ptrdiff_t>(aad_offsets[i]),
                 aad.begin() + static_cast<std::ptrdiff_t>(aad_offsets[i + 1]));
  }
  // Message i's IV as OpenSSL takes it (chacha20's 12-byte nonce: the counter word in front).
  Bytes reference_iv(std::size_t i) const {
    Bytes iv = part(ivs, i, iv_bytes);
    if (cipher != opkit::ops::Cipher::chacha20 || iv_bytes != 12) return iv;
    Bytes counter(4);
    for (int b = 0; b < 4; ++b) counter[b] = static_cast<std::uint8_t>(chacha20_counter >> (8 * b));
    counter.insert(counter.end(), iv.begin(), iv.end());
    return counter;
  }
  // What OpenSSL makes of message i of `plain`.
  Sealed reference(const Bytes& plain, std::size_t i) const {
    return reference_encrypt(cipher, part(keys, i, key_bytes()), reference_iv(i), message_aad(i), slice(plain, i));
  }
};

inline Batch random_batch(opkit::ops::Cipher cipher, const BatchShape& shape) {
  using opkit::ops::Cipher;
  const bool aead = opkit::ops::cipher_traits(cipher).aead;
  const std::size_t count = shape.count != 0 ? shape.count : 1 + random_below(40);
  Batch b{cipher, count, shape.variable ? 0 : random_below(200), {}, {}, {}, {}, {}, {}, 0};
  b.iv_bytes = shape.iv_bytes != 0 ? shape.iv_bytes : (aead ? 12 : 16);
  std::size_t total = b.count * b.fixed_bytes;
  if (shape.variable) {
    b.offsets.push_back(0);
    for (std::size_t i = 0; i < b.count; ++i) b.offsets.push_back(b.offsets.back() + random_below(600));
    total = b.offsets.back();
  }
  b.data = random_bytes(total);
  b.keys = random_bytes(b.count * b.key_bytes());
  const bool nonce12 = cipher == Cipher::chacha20 && b.iv_bytes == 12;
  if (nonce12) b.chacha20_counter = static_cast<std::uint32_t>(random_below(1u << 24));
  const bool gcm = aead && cipher != Cipher::chacha20_poly1305;
  for (std::size_t i = 0; i < b.count; ++i) {
    Bytes iv = gcm ? random_bytes(b.iv_bytes) : random_iv(cipher);  // GCM: a nonce of any length
    if (nonce12) iv.erase(iv.begin(), iv.begin() + 4);              // the nonce of counter || nonce
    b.ivs.insert(b.ivs.end(), iv.begin(), iv.end());
  }
  if (aead && shape.aad) {
    b.aad_offsets.push_back(0);
    for (std::size_t i = 0; i < b.count; ++i) b.aad_offsets.push_back(b.aad_offsets.back() + random_below(40));
    b.aad = random_bytes(b.aad_offsets.back());
  }
  return b;
}

// The batches the existing suite has always made: AAD with offsets only.
inline Batch random_batch(opkit::ops::Cipher cipher, bool variable) {
  return random_batch(cipher, {.variable = variable, .aad = variable});
}

// What OpenSSL seals b's messages to: the ciphertext in b's layout and tag_bytes of tag each.
inline Sealed reference_seal(const Batch& b, std::size_t tag_bytes = 16) {
  Sealed sealed{Bytes(b.data.size()), Bytes(aead(b.cipher) ? b.count * tag_bytes : 0)};
  for (std::size_t i = 0; i < b.count; ++i) {
    const Sealed one = reference_encrypt(b.cipher, b.part(b.keys, i, b.key_bytes()), b.reference_iv(i),
                                         b.message_aad(i), b.slice(b.data, i), tag_bytes);
    std::copy(one.data.begin(), one.data.end(), sealed.data.begin() + static_cast<std::ptrdiff_t>(b.begin(i)));
    std::copy(one.tag.begin(), one.tag.end(), sealed.tag.begin() + static_cast<std::ptrdiff_t>(i * one.tag.size()));
  }
  return sealed;
}

// One batch call on device buffers (in place or not); the output comes back whether or not the
// call throws AuthenticationError. device_tags: the AEAD tags in device memory on `device` (the
// BufferView overloads: encryption writes them there and they come back into `tags`, decryption
// reads them there, copied from `tags`), else host memory.
inline void run_batch(const opkit::Device& device, opkit::ops::Cipher cipher, const opkit::ops::CipherBatch& batch,
                      bool encrypt, const Bytes& in, Bytes& out, Bytes& tags, bool in_place,
                      const opkit::ops::CipherOptions& options, bool device_tags = false) {
  namespace ops = opkit::ops;
  auto a = device.alloc<std::uint8_t>(std::max<std::size_t>(in.size(), 1));
  auto c = device.alloc<std::uint8_t>(std::max<std::size_t>(in.size(), 1));
  auto t = device.alloc<std::uint8_t>(std::max<std::size_t>(tags.size(), 1));
  if (!in.empty()) a.view().subview(0, in.size()).copy_from(in);
  if (device_tags && !encrypt && !tags.empty()) t.view().subview(0, tags.size()).copy_from(tags);
  c.fill(0xAA);
  const auto src = opkit::BufferView<const std::uint8_t>(a.view()).subview(0, in.size());
  const auto dst = (in_place ? a.view() : c.view()).subview(0, in.size());
  const auto tags_view = t.view().subview(0, tags.size());
  std::optional<ops::AuthenticationError> failed;
  try {
    if (encrypt && device_tags)
      ops::encrypt_batch(cipher, batch, src, dst, tags_view, options);
    else if (encrypt)
      ops::encrypt_batch(cipher, batch, src, dst, tags, options);
    else if (device_tags)
      ops::decrypt_batch(cipher, batch, src, dst, opkit::BufferView<const std::uint8_t>(tags_view), options);
    else
      ops::decrypt_batch(cipher, batch, src, dst, tags, options);
  } catch (const ops::AuthenticationError& e) {
    failed = e;
  }
  out = in.empty() ? Bytes{} : dst.to_host();
  if (encrypt && device_tags && !tags.empty()) tags = tags_view.to_host();
  if (failed) throw *failed;
}

// Flips one bit in about a third of the sealed messages, in the ciphertext or the tag (tag_bytes a
// message) or, given aad (b's AAD, to be passed in its place), the message's AAD when it has any;
// and in the last message's tag when that chose none. Returns their indices in order.
inline std::vector<std::size_t> forge_some(const Batch& b, Bytes& sealed, Bytes& tags, Bytes* aad = nullptr,
                                           std::size_t tag_bytes = 16) {
  std::vector<std::size_t> forged;
  for (std::size_t i = 0; i < b.count; ++i) {
    if (random_below(3) != 0) continue;
    forged.push_back(i);
    const std::size_t n = b.end(i) - b.begin(i);
    const std::size_t where = random_below(aad != nullptr ? 3 : 2);
    const std::size_t aad_bytes =
        aad != nullptr && !b.aad_offsets.empty() ? b.aad_offsets[i + 1] - b.aad_offsets[i] : 0;
    if (where == 0 && n != 0)
      sealed[b.begin(i) + random_below(n)] ^= 0x01;
    else if (where == 2 && aad_bytes != 0)
      (*aad)[b.aad_offsets[i] + random_below(aad_bytes)] ^= 0x10;
    else
      tags[tag_bytes * i + random_below(tag_bytes)] ^= 0x80;
  }
  if (forged.empty()) {
    forged.push_back(b.count - 1);
    tags[tag_bytes * (b.count - 1)] ^= 0x01;
  }
  return forged;
}

// Expects decryption's output to hold zeros for the forged messages and the plaintext elsewhere.
inline void expect_forged_zeroed(const Batch& b, const Bytes& opened, const std::vector<std::size_t>& forged,
                                 const std::string& what) {
  for (std::size_t i = 0; i < b.count; ++i) {
    const bool bad = std::find(forged.begin(), forged.end(), i) != forged.end();
    EXPECT_EQ(b.slice(opened, i), bad ? Bytes(b.end(i) - b.begin(i), 0) : b.slice(b.data, i))
        << what << " message " << i << (bad ? " (forged) not zeroed" : " wrong");
  }
}

// Every cipher with its default IV size (0), plus the other IV forms: chacha20's 12-byte nonce
// with a counter, GCM with a random short (1..11 bytes) and long (13..64 bytes) nonce.
inline std::vector<std::pair<opkit::ops::Cipher, std::size_t>> every_iv_form() {
  std::vector<std::pair<opkit::ops::Cipher, std::size_t>> forms;
  for (opkit::ops::Cipher cipher : opkit::ops::all_ciphers()) forms.emplace_back(cipher, 0);
  forms.emplace_back(opkit::ops::Cipher::chacha20, 12);
  forms.emplace_back(opkit::ops::Cipher::aes_128_gcm, 1 + random_below(11));
  forms.emplace_back(opkit::ops::Cipher::aes_256_gcm, 13 + random_below(52));
  return forms;
}

// Bytes on a device, `shift` bytes into a buffer of their own (shift 1..3: not 4-byte aligned).
struct OnDevice {
  opkit::DeviceBuffer<std::uint8_t> buffer;
  std::size_t size, shift;

  OnDevice(const opkit::Device& device, const Bytes& bytes, std::size_t shift_by = 0)
      : buffer(device.alloc<std::uint8_t>(bytes.size() + shift_by + 1)), size(bytes.size()), shift(shift_by) {
    if (!bytes.empty()) buffer.view().subview(shift, size).copy_from(bytes);
  }
  opkit::BufferView<const std::uint8_t> view() const { return std::as_const(buffer).view().subview(shift, size); }
  opkit::BufferView<std::uint8_t> view() { return buffer.view().subview(shift, size); }
};

}  // namespace cipher_test
