// Validation of cipher arguments (see cipher_checks.hpp).
#include "cipher_checks.hpp"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace opkit::ops::detail {
namespace {

Error bad(const char* stage, const std::string& message) {
  return Error(Errc::invalid_argument, stage, message);
}

bool gcm(Cipher c) {
  return c == Cipher::aes_128_gcm || c == Cipher::aes_192_gcm || c == Cipher::aes_256_gcm;
}

std::string name(Cipher c) {
  return std::string(cipher_traits(c).name);
}

void check_tag_bytes(Cipher cipher, std::size_t tag_bytes, const char* stage) {
  const CipherTraits& t = cipher_traits(cipher);
  if (!t.aead) {
    if (tag_bytes != 0) throw bad(stage, name(cipher) + " has no tag; pass an empty tag buffer");
    return;
  }
  const bool ok = gcm(cipher) ? (tag_bytes >= 12 && tag_bytes <= 16) || tag_bytes == 8 || tag_bytes == 4
                              : tag_bytes == aead_tag_bytes;
  if (!ok)
    throw bad(stage, "a " + name(cipher) + " tag of " + std::to_string(tag_bytes) + " bytes is not allowed (" +
                         (gcm(cipher) ? "GCM: 16, 15, 14, 13, 12, 8 or 4" : "16 bytes") + ")");
}

}  // namespace

Iv16 iv16(Cipher cipher, Bytes iv, std::uint32_t chacha20_counter) {
  Iv16 out{};
  switch (cipher) {
    case Cipher::aes_128_ctr:
    case Cipher::aes_192_ctr:
    case Cipher::aes_256_ctr:
      std::memcpy(out.data(), iv.data(), 16);
      break;
    case Cipher::chacha20:
      if (iv.size() == 16) {
        std::memcpy(out.data(), iv.data(), 16);
      } else {
        for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(chacha20_counter >> (8 * i));
        std::memcpy(out.data() + 4, iv.data(), 12);
      }
      break;
    case Cipher::chacha20_poly1305:
      std::memcpy(out.data() + 4, iv.data(), 12);
      break;
    default:  // GCM keeps its own nonce
      break;
  }
  return out;
}

Iv16 check_message(Cipher cipher, std::size_t key_bytes, Bytes iv, std::size_t tag_bytes, std::uint64_t bytes,
                   std::uint32_t chacha20_counter, const char* stage) {
  const CipherTraits& t = cipher_traits(cipher);
  if (key_bytes != t.key_bytes)
    throw bad(stage, name(cipher) + " needs a " + std::to_string(t.key_bytes) + "-byte key, got " +
                         std::to_string(key_bytes) + " bytes");
  check_tag_bytes(cipher, tag_bytes, stage);
  Iv16 out{};
  const std::uint64_t blocks = (bytes + t.block_bytes - 1) / t.block_bytes;
  switch (cipher) {
    case Cipher::aes_128_ctr:
    case Cipher::aes_192_ctr:
    case Cipher::aes_256_ctr:
      // The 128-bit counter wraps modulo 2^128 as in OpenSSL; no length reaches that.
      if (iv.size() != 16) throw bad(stage, name(cipher) + " needs a 16-byte IV, got " + std::to_string(iv.size()));
      std::memcpy(out.data(), iv.data(), 16);
      return out;
    case Cipher::aes_128_gcm:
    case Cipher::aes_192_gcm:
    case Cipher::aes_256_gcm:
      if (iv.empty()) throw bad(stage, "a GCM nonce of 0 bytes is not allowed (SP 800-38D); 12 bytes is standard");
      if (blocks > (std::uint64_t{1} << 32) - 2)
        throw bad(stage, "GCM encrypts at most (2^32 - 2) 16-byte blocks (68,719,476,704 bytes) per nonce; got " +
                             std::to_string(bytes) + " bytes");
      return out;
    case Cipher::chacha20: {
      std::uint32_t counter = chacha20_counter;
      if (iv.size() == 16) {
        counter =
            std::uint32_t{iv[0]} | std::uint32_t{iv[1]} << 8 | std::uint32_t{iv[2]} << 16 | std::uint32_t{iv[3]} << 24;
        std::memcpy(out.data(), iv.data(), 16);
      } else if (iv.size() == 12) {
        for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(counter >> (8 * i));
        std::memcpy(out.data() + 4, iv.data(), 12);
      } else {
        throw bad(stage, "chacha20 needs a 16-byte IV (counter || nonce) or a 12-byte nonce, got " +
                             std::to_string(iv.size()) + " bytes");
      }
      if (blocks > (std::uint64_t{1} << 32) - counter)
        throw bad(stage, "chacha20's 32-bit block counter from " + std::to_string(counter) + " covers " +
                             std::to_string(((std::uint64_t{1} << 32) - counter) * 64) + " bytes; got " +
                             std::to_string(bytes));
      return out;
    }
    case Cipher::chacha20_poly1305:
      if (iv.size() != 12)
        throw bad(stage, "chacha20-poly1305 needs a 12-byte nonce, got " + std::to_string(iv.size()) + " bytes");
      if (blocks > (std::uint64_t{1} << 32) - 1)
        throw bad(stage,
                  "chacha20-poly1305 encrypts at most 274,877,906,880 bytes per nonce; got " + std::to_string(bytes));
      std::memcpy(out.data() + 4, iv.data(), 12);
      return out;
  }
  throw bad(stage, "unknown cipher");
}

void check_in_out(const void* in, std::size_t in_bytes, const void* out, std::size_t out_bytes, const char* stage) {
  if (in_bytes != out_bytes)
    throw bad(stage, "output of " + std::to_string(out_bytes) + " bytes for " + std::to_string(in_bytes) +
                         " bytes of input; they must be the same size");
  if (in == out || in_bytes == 0) return;
  const auto a = reinterpret_cast<std::uintptr_t>(in), b = reinterpret_cast<std::uintptr_t>(out);
  if (a < b + out_bytes && b < a + in_bytes)
    throw bad(stage, "input and output overlap without being the same buffer (in place must be exactly in place)");
}

BatchBounds batch_offsets(const CipherBatch& batch, std::size_t data_bytes, const char* stage) {
  if (batch.offsets.empty()) {
    if (batch.count != 0 && batch.message_bytes > data_bytes / batch.count)
      throw bad(stage, std::to_string(batch.count) + " messages of " + std::to_string(batch.message_bytes) +
                           " bytes do not fit " + std::to_string(data_bytes) + " bytes of data");
    if (batch.count * batch.message_bytes != data_bytes)
      throw bad(stage, std::to_string(data_bytes) + " bytes of data are not " + std::to_string(batch.count) +
                           " messages of " + std::to_string(batch.message_bytes) + " bytes");
    return BatchBounds(batch.count, batch.message_bytes);
  }
  if (batch.offsets.size() != batch.count + 1)
    throw bad(stage, std::to_string(batch.count) + " messages need " + std::to_string(batch.count + 1) +
                         " offsets, got " + std::to_string(batch.offsets.size()));
  for (std::size_t i = 0; i < batch.count; ++i)
    if (batch.offsets[i + 1] < batch.offsets[i] || batch.offsets[i + 1] > data_bytes)
      throw bad(stage, "offsets of message " + std::to_string(i) + " run backwards or past the end of the data (" +
                           std::to_string(data_bytes) + " bytes)");
  if (batch.offsets[0] > data_bytes) throw bad(stage, "offset past the end of the data");
  return BatchBounds(std::vector<std::uint64_t>(batch.offsets.begin(), batch.offsets.end()));
}

namespace {

// The size of a batch field given in host memory (`host`) or device memory (`device`), after
// checking that it is given in at most one of the two.
std::size_t field_bytes(Bytes host, const std::optional<BufferView<const std::uint8_t>>& device, const char* name,
                        const char* stage) {
  if (!device) return host.size();
  if (!host.empty())
    throw bad(stage, std::string("the batch's ") + name + " are given twice, in host memory (" + name +
                         ") and in device memory (device_" + name + "); pass one");
  return device->size();
}

void check_field_device(const std::optional<BufferView<const std::uint8_t>>& view, const Device* data_device,
                        const char* name, const char* stage) {
  if (!view) return;
  if (data_device == nullptr)
    throw bad(stage, std::string("device_") + name + " needs the data on that device too (the BufferView forms of " +
                         stage + "_batch); host data takes host " + name);
  if (!(view->device() == *data_device))
    throw bad(stage, std::string("device_") + name + " live on " + view->device().id() + ", the data on " +
                         data_device->id() + "; they must be on the data's device");
}

// The AAD offsets against the AAD's size (host or device form alike).
void check_aad_offsets(Cipher cipher, const CipherBatch& batch, std::size_t aad_bytes, const char* stage) {
  if (batch.aad_offsets.empty()) {
    if (aad_bytes != 0) throw bad(stage, "batch AAD needs aad_offsets (count + 1 of them)");
    return;
  }
  if (!cipher_traits(cipher).aead) throw bad(stage, name(cipher) + " takes no AAD");
  if (batch.aad_offsets.size() != batch.count + 1)
    throw bad(stage, std::to_string(batch.count) + " messages need " + std::to_string(batch.count + 1) +
                         " AAD offsets, got " + std::to_string(batch.aad_offsets.size()));
  for (std::size_t i = 0; i < batch.count; ++i)
    if (batch.aad_offsets[i + 1] < batch.aad_offsets[i] || batch.aad_offsets[i + 1] > aad_bytes)
      throw bad(stage, "AAD offsets of message " + std::to_string(i) + " run backwards or past the AAD's end");
}

}  // namespace

void check_batch_devices(const CipherBatch& batch, const Device* data_device, const char* stage) {
  check_field_device(batch.device_keys, data_device, "keys", stage);
  check_field_device(batch.device_ivs, data_device, "ivs", stage);
  check_field_device(batch.device_aad, data_device, "aad", stage);
}

CheckedBatch check_batch(Cipher cipher, const CipherBatch& batch, const BatchBounds& bounds, std::size_t tags_bytes,
                         std::uint32_t chacha20_counter, const char* stage) {
  const CipherTraits& t = cipher_traits(cipher);
  CheckedBatch checked;
  checked.cipher = cipher;
  checked.ivs = batch.ivs;
  checked.iv_bytes = batch.iv_bytes;
  checked.chacha20_counter = chacha20_counter;
  const std::size_t keys_bytes = field_bytes(batch.keys, batch.device_keys, "keys", stage);
  const std::size_t ivs_bytes = field_bytes(batch.ivs, batch.device_ivs, "ivs", stage);
  const std::size_t aad_bytes = field_bytes(batch.aad, batch.device_aad, "aad", stage);
  if (keys_bytes != batch.count * t.key_bytes)
    throw bad(stage, std::to_string(batch.count) + " messages need " + std::to_string(batch.count) + " x " +
                         std::to_string(t.key_bytes) + " key bytes, got " + std::to_string(keys_bytes));
  if (ivs_bytes != batch.count * batch.iv_bytes)
    throw bad(stage, std::to_string(batch.count) + " messages need " + std::to_string(batch.count) + " x " +
                         std::to_string(batch.iv_bytes) + " IV bytes, got " + std::to_string(ivs_bytes));
  check_aad_offsets(cipher, batch, aad_bytes, stage);
  std::size_t& tag_bytes = checked.tag_bytes;
  if (t.aead && batch.count != 0) {
    if (tags_bytes % batch.count != 0)
      throw bad(stage, "a tag buffer of " + std::to_string(tags_bytes) + " bytes is not one tag per message");
    tag_bytes = tags_bytes / batch.count;
  } else if (tags_bytes != 0) {
    throw bad(stage, t.aead ? "an empty batch has no tags" : name(cipher) + " has no tag; pass an empty tag buffer");
  }
  if (batch.count == 0) return checked;
  // Device IVs are not read on the host: an all-zero IV of their length stands in for each, which
  // passes every check on the contents (its chacha20 counter is 0, the most room there is).
  const bool host_ivs = !batch.device_ivs;
  const std::vector<std::uint8_t> stand_in(host_ivs ? 0 : batch.iv_bytes, 0);
  const auto iv_of = [&](std::size_t i) {
    return host_ivs ? batch.ivs.subspan(i * batch.iv_bytes, batch.iv_bytes) : Bytes(stand_in);
  };
  const auto check = [&](std::size_t i) {
    (void)check_message(cipher, t.key_bytes, iv_of(i), tag_bytes, bounds.size(i), chacha20_counter, stage);
  };
  // Message 0 checks the key, IV and tag sizes, which all messages share. What check_message
  // checks beyond that depends only on the length, and for chacha20 with 16-byte IVs on the
  // counter word each IV begins with: a message whose length (and counter) could fail is run
  // through check_message, which then throws as it would have.
  check(0);
  const bool per_counter = cipher == Cipher::chacha20 && batch.iv_bytes == 16;
  checked.counters_on_device = per_counter && !host_ivs;
  const bool host_counters = per_counter && host_ivs;
  if (bounds.fixed() && !host_counters) return checked;
  const std::uint64_t block = t.block_bytes;
  std::uint64_t limit = ~std::uint64_t{0};  // most blocks a message may have (beyond its counter)
  if (cipher == Cipher::aes_128_gcm || cipher == Cipher::aes_192_gcm || cipher == Cipher::aes_256_gcm)
    limit = (std::uint64_t{1} << 32) - 2;
  else if (cipher == Cipher::chacha20_poly1305)
    limit = (std::uint64_t{1} << 32) - 1;
  else if (cipher == Cipher::chacha20)
    limit = std::uint64_t{1} << 32;
  if (limit == ~std::uint64_t{0}) return checked;  // CTR: no length reaches the counter's end
  const auto fits = [&](std::size_t i) {
    std::uint64_t room = limit;
    if (host_counters) {
      const std::uint8_t* iv = batch.ivs.data() + 16 * i;
      room -=
          std::uint32_t{iv[0]} | std::uint32_t{iv[1]} << 8 | std::uint32_t{iv[2]} << 16 | std::uint32_t{iv[3]} << 24;
    } else if (cipher == Cipher::chacha20 && !per_counter) {
      room -= chacha20_counter;
    }
    return (bounds.size(i) + block - 1) / block <= room;
  };
  // One pass over the cores (a 16 MB read of counters for 10^6 messages), then, only if a message
  // does not fit, the first such in order through check_message.
  bool all_fit = true;
  const auto count = static_cast<std::ptrdiff_t>(batch.count);
#pragma omp parallel for schedule(static) reduction(&& : all_fit) if (batch.count >= 65536)
  for (std::ptrdiff_t i = 1; i < count; ++i) all_fit = all_fit && fits(static_cast<std::size_t>(i));
  if (all_fit) return checked;
  for (std::size_t i = 1; i < batch.count; ++i)
    if (!fits(i)) check(i);
  return checked;
}

}  // namespace opkit::ops::detail
