// The public cipher functions: checks, then the host CPU path (OpenSSL EVP) or a device's kernels,
// and for AEAD decryption the tag verification that decides whether any plaintext is released.
#include "opkit/ops/cipher.hpp"

#include <openssl/crypto.h>

#include <array>
#include <cstring>

#include "aes_cipher.hpp"
#include "chacha20_counters.hpp"
#include "chacha20_device.hpp"
#include "cipher_checks.hpp"
#include "cipher_evp.hpp"
#include "cipher_kernels.hpp"
#include "device_secret.hpp"

namespace opkit::ops {
namespace {

using detail::Bytes;
using detail::Iv16;

bool is_chacha(Cipher c) {
  return c == Cipher::chacha20 || c == Cipher::chacha20_poly1305;
}

// Where host data runs: nullopt for the host CPU (OpenSSL).
const std::optional<Device>& host_data_device(const CipherOptions& options) {
  return options.device;
}

const Device& buffer_device(const Device& in, const Device& out, const CipherOptions& options, const char* stage) {
  if (!(in == out)) throw Error(Errc::invalid_argument, stage, "input and output live on different devices");
  if (options.device && !(*options.device == in))
    throw Error(Errc::invalid_argument, stage, "the buffers live on another device than CipherOptions::device");
  return in;
}

// Compares the computed tag with the expected one in constant time.
bool tags_match(const std::uint8_t* computed, Bytes expected) {
  return CRYPTO_memcmp(computed, expected.data(), expected.size()) == 0;
}

void zero_device(const Device& device, std::uint8_t* out, std::size_t bytes, const Stream* stream) {
  if (bytes != 0) device.fill(out, 0, 1, bytes, stream);
}

// One message at device pointers of `device`. Returns false when the tag did not verify (out
// already zeroed).
bool device_bulk(const Device& device, Cipher cipher, bool encrypt, const CipherKey& key, const Iv16& iv,
                 const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, detail::TagOut tag_out,
                 Bytes tag_expected, const Stream* stream) {
  detail::cipher_kernel_set().require(device);
  bool ok = true;
  if (!is_chacha(cipher)) {
    ok = detail::aes_device_bulk(device, cipher, encrypt, key, iv, in, out, bytes, tag_out, tag_expected, stream);
  } else if (encrypt && tag_out.on_device) {  // the full 16-byte tag (check_message checked the length)
    detail::chacha20_device_bulk(device, cipher == Cipher::chacha20_poly1305, false, key.key, iv, key.aad, in, out,
                                 bytes, tag_out, stream);
  } else {
    const bool aead = cipher == Cipher::chacha20_poly1305;
    std::array<std::uint8_t, aead_tag_bytes> tag{};
    detail::chacha20_device_bulk(device, aead, !encrypt, key.key, iv, key.aad, in, out, bytes, {tag, false}, stream);
    if (aead && encrypt) std::memcpy(tag_out.bytes.data(), tag.data(), tag_out.bytes.size());
    if (aead && !encrypt) ok = tags_match(tag.data(), tag_expected);
  }
  if (ok) return true;
  zero_device(device, out, bytes, stream);
  detail::synchronize(device, stream);
  return false;
}

// Host memory through a device: the CPU backend's memory is host memory, so its kernels run on
// the data in place; a GPU gets a copy in and out (the output only when it is authentic).
bool host_through_device(const Device& device, Cipher cipher, bool encrypt, const CipherKey& key, const Iv16& iv,
                         Bytes in, std::span<std::uint8_t> out, std::span<std::uint8_t> tag_out, Bytes tag_expected) {
  if (!device.is_gpu())
    return device_bulk(device, cipher, encrypt, key, iv, in.data(), out.data(), in.size(), {tag_out}, tag_expected,
                       nullptr);
  DeviceBuffer<std::uint8_t> buffer = device.alloc<std::uint8_t>(std::max<std::size_t>(in.size(), 1));
  auto view = buffer.view().subview(0, in.size());
  if (!in.empty()) view.copy_from(in);
  const bool ok = device_bulk(device, cipher, encrypt, key, iv, buffer.data(), buffer.data(), in.size(), {tag_out},
                              tag_expected, nullptr);
  if (ok && !in.empty()) view.copy_to(out);
  if (!ok && !out.empty()) OPENSSL_cleanse(out.data(), out.size());
  return ok;
}

// A device tag or tags buffer must be on the data's device.
void check_tags_device(const Device& tags, const Device& data, const char* what, const char* stage) {
  if (!(tags == data))
    throw Error(Errc::invalid_argument, stage,
                std::string("the ") + what + " buffer lives on another device than the data (" + tags.id() +
                    ", the data on " + data.id() + ")");
}

const char* stage_of(bool encrypt) {
  return encrypt ? "encrypt" : "decrypt";
}

// The checks both bulk paths make before any work: key, IV, tag and length (check_message), and
// AAD only for an AEAD. Returns the 16-byte IV form the kernels and EVP take.
Iv16 check_bulk_message(Cipher cipher, const CipherKey& key, std::size_t tag_bytes, std::size_t bytes,
                        const CipherOptions& options, const char* stage) {
  const Iv16 iv =
      detail::check_message(cipher, key.key.size(), key.iv, tag_bytes, bytes, options.chacha20_counter, stage);
  if (!cipher_traits(cipher).aead && !key.aad.empty())
    throw Error(Errc::invalid_argument, stage, std::string(cipher_traits(cipher).name) + " takes no AAD");
  return iv;
}

void bulk_host(Cipher cipher, bool encrypt, const CipherKey& key, Bytes in, std::span<std::uint8_t> out,
               std::span<std::uint8_t> tag_out, Bytes tag_expected, const CipherOptions& options) {
  const char* stage = stage_of(encrypt);
  detail::check_in_out(in.data(), in.size(), out.data(), out.size(), stage);
  const std::size_t tag_bytes = encrypt ? tag_out.size() : tag_expected.size();
  const Iv16 iv = check_bulk_message(cipher, key, tag_bytes, in.size(), options, stage);
  bool ok = true;
  if (const auto& device = host_data_device(options)) {
    ok = host_through_device(*device, cipher, encrypt, key, iv, in, out, tag_out, tag_expected);
  } else {
    const bool gcm = cipher_traits(cipher).aead && !is_chacha(cipher);
    std::array<std::uint8_t, aead_tag_bytes> tag{};
    if (!encrypt) std::copy(tag_expected.begin(), tag_expected.end(), tag.begin());
    ok = detail::evp_bulk(cipher, encrypt, key.key, gcm ? key.iv : Bytes(iv), key.aad, in.data(), out.data(), in.size(),
                          tag.data(), tag_bytes, options.threads);
    if (encrypt) std::copy(tag.begin(), tag.begin() + static_cast<std::ptrdiff_t>(tag_bytes), tag_out.begin());
  }
  if (!ok) throw AuthenticationError({0});
}

void bulk_device(Cipher cipher, bool encrypt, const CipherKey& key, BufferView<const std::uint8_t> in,
                 BufferView<std::uint8_t> out, detail::TagOut tag_out, Bytes tag_expected,
                 const CipherOptions& options) {
  const char* stage = stage_of(encrypt);
  const Device& device = buffer_device(in.device(), out.device(), options, stage);
  detail::check_in_out(in.data(), in.size(), out.data(), out.size(), stage);
  const std::size_t tag_bytes = encrypt ? tag_out.bytes.size() : tag_expected.size();
  const Iv16 iv = check_bulk_message(cipher, key, tag_bytes, in.size(), options, stage);
  if (!device_bulk(device, cipher, encrypt, key, iv, in.data(), out.data(), in.size(), tag_out, tag_expected,
                   options.stream))
    throw AuthenticationError({0});
}

// A checked batch at device pointers. AEAD decryption verifies on the device (the kernels compare
// the tags and write per-message verdicts) and waits only for what says which messages failed.
void batch_on_device(const Device& device, Cipher cipher, bool encrypt, const CipherBatch& batch,
                     const detail::BatchBounds& bounds, const detail::CheckedBatch& checked, const std::uint8_t* in,
                     std::uint8_t* out, detail::TagOut tags_out, detail::TagIn tags_expected, const Stream* stream) {
  detail::cipher_kernel_set().require(device);
  if (checked.counters_on_device)
    detail::check_chacha20_counters_on_device(device, batch, bounds, stage_of(encrypt), stream);
  std::vector<std::size_t> failed =
      is_chacha(cipher) ? detail::chacha20_device_batch(device, cipher == Cipher::chacha20_poly1305, !encrypt, batch,
                                                        bounds, checked, in, out, tags_out, tags_expected, stream)
                        : detail::aes_device_batch(device, cipher, encrypt, batch, bounds, checked, in, out, tags_out,
                                                   tags_expected, stream);
  if (failed.empty()) return;
  // ChaCha20-Poly1305's kernel zeroed its failing messages; GCM's CTR kernel did not write them
  // (in place they still hold the ciphertext).
  if (!is_chacha(cipher)) {
    for (std::size_t i : failed) zero_device(device, out + bounds.begin(i), bounds.size(i), stream);
    detail::synchronize(device, stream);
  }
  throw AuthenticationError(std::move(failed));
}

void batch_host(Cipher cipher, bool encrypt, const CipherBatch& batch, Bytes in, std::span<std::uint8_t> out,
                std::span<std::uint8_t> tags_out, Bytes tags_expected, const CipherOptions& options) {
  const char* stage = stage_of(encrypt);
  detail::check_batch_devices(batch, nullptr, stage);
  detail::check_in_out(in.data(), in.size(), out.data(), out.size(), stage);
  const detail::BatchBounds bounds = detail::batch_offsets(batch, in.size(), stage);
  const std::size_t tags_bytes = encrypt ? tags_out.size() : tags_expected.size();
  const detail::CheckedBatch checked =
      detail::check_batch(cipher, batch, bounds, tags_bytes, options.chacha20_counter, stage);
  if (batch.count == 0) return;
  if (const auto& device = host_data_device(options)) {
    if (device->is_gpu()) {
      // Copy in, run, copy out (authentic messages only; the others are zeroed on the device).
      const std::size_t bytes = in.size();
      DeviceBuffer<std::uint8_t> buffer = device->alloc<std::uint8_t>(std::max<std::size_t>(bytes, 1));
      if (bytes != 0) buffer.view().subview(0, bytes).copy_from(in);
      try {
        batch_on_device(*device, cipher, encrypt, batch, bounds, checked, buffer.data(), buffer.data(), {tags_out},
                        {tags_expected}, nullptr);
      } catch (const AuthenticationError&) {
        if (bytes != 0) buffer.view().subview(0, bytes).copy_to(out);
        throw;
      }
      if (bytes != 0) buffer.view().subview(0, bytes).copy_to(out);
    } else {
      batch_on_device(*device, cipher, encrypt, batch, bounds, checked, in.data(), out.data(), {tags_out},
                      {tags_expected}, nullptr);
    }
    return;
  }
  std::uint8_t* tags = encrypt ? tags_out.data() : const_cast<std::uint8_t*>(tags_expected.data());  // EVP only reads
  std::vector<std::size_t> failed =
      detail::evp_batch(cipher, encrypt, batch, bounds, checked, in.data(), out.data(), tags, options.threads);
  if (!failed.empty()) throw AuthenticationError(std::move(failed));
}

void batch_device(Cipher cipher, bool encrypt, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                  BufferView<std::uint8_t> out, detail::TagOut tags_out, detail::TagIn tags_expected,
                  const CipherOptions& options) {
  const char* stage = stage_of(encrypt);
  const Device& device = buffer_device(in.device(), out.device(), options, stage);
  detail::check_batch_devices(batch, &device, stage);
  detail::check_in_out(in.data(), in.size(), out.data(), out.size(), stage);
  const detail::BatchBounds bounds = detail::batch_offsets(batch, in.size(), stage);
  const std::size_t tags_bytes = encrypt ? tags_out.bytes.size() : tags_expected.bytes.size();
  const detail::CheckedBatch checked =
      detail::check_batch(cipher, batch, bounds, tags_bytes, options.chacha20_counter, stage);
  if (batch.count == 0) return;
  batch_on_device(device, cipher, encrypt, batch, bounds, checked, in.data(), out.data(), tags_out, tags_expected,
                  options.stream);
}

}  // namespace

void encrypt(Cipher cipher, const CipherKey& key, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
             std::span<std::uint8_t> tag, const CipherOptions& options) {
  bulk_host(cipher, true, key, in, out, tag, {}, options);
}
void decrypt(Cipher cipher, const CipherKey& key, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
             std::span<const std::uint8_t> tag, const CipherOptions& options) {
  bulk_host(cipher, false, key, in, out, {}, tag, options);
}
void encrypt(Cipher cipher, const CipherKey& key, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
             std::span<std::uint8_t> tag, const CipherOptions& options) {
  bulk_device(cipher, true, key, in, out, {tag}, {}, options);
}
void encrypt(Cipher cipher, const CipherKey& key, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
             BufferView<std::uint8_t> tag, const CipherOptions& options) {
  check_tags_device(tag.device(), in.device(), "tag", "encrypt");
  bulk_device(cipher, true, key, in, out, {{tag.data(), tag.size()}, true}, {}, options);
}
void decrypt(Cipher cipher, const CipherKey& key, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
             std::span<const std::uint8_t> tag, const CipherOptions& options) {
  bulk_device(cipher, false, key, in, out, {}, tag, options);
}

void encrypt_batch(Cipher cipher, const CipherBatch& batch, std::span<const std::uint8_t> in,
                   std::span<std::uint8_t> out, std::span<std::uint8_t> tags, const CipherOptions& options) {
  batch_host(cipher, true, batch, in, out, tags, {}, options);
}
void decrypt_batch(Cipher cipher, const CipherBatch& batch, std::span<const std::uint8_t> in,
                   std::span<std::uint8_t> out, std::span<const std::uint8_t> tags, const CipherOptions& options) {
  batch_host(cipher, false, batch, in, out, {}, tags, options);
}
void encrypt_batch(Cipher cipher, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                   BufferView<std::uint8_t> out, std::span<std::uint8_t> tags, const CipherOptions& options) {
  batch_device(cipher, true, batch, in, out, {tags}, {}, options);
}
void encrypt_batch(Cipher cipher, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                   BufferView<std::uint8_t> out, BufferView<std::uint8_t> tags, const CipherOptions& options) {
  check_tags_device(tags.device(), in.device(), "tags", "encrypt");
  batch_device(cipher, true, batch, in, out, {{tags.data(), tags.size()}, true}, {}, options);
}
void decrypt_batch(Cipher cipher, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                   BufferView<std::uint8_t> out, std::span<const std::uint8_t> tags, const CipherOptions& options) {
  batch_device(cipher, false, batch, in, out, {}, {tags}, options);
}
void decrypt_batch(Cipher cipher, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                   BufferView<std::uint8_t> out, BufferView<const std::uint8_t> tags, const CipherOptions& options) {
  check_tags_device(tags.device(), in.device(), "tags", "decrypt");
  batch_device(cipher, false, batch, in, out, {}, {{tags.data(), tags.size()}, true}, options);
}

}  // namespace opkit::ops
