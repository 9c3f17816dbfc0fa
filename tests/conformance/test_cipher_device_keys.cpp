// Cipher batches whose keys, IVs and AAD are device memory on the data's device
// (CipherBatch::device_keys, device_ivs, device_aad), on every device target against OpenSSL EVP
// called directly: every cipher and IV form, fixed and variable layouts, AAD, in place or not, at
// any alignment, mixed with host inputs, into host or device tags; AEAD decryption of OpenSSL's
// batches against expected tags in device memory (every ChaCha20 group size, GCM's full and
// truncated tags); forged messages reported by index and zeroed; the device-side check of
// chacha20's 16-byte IV counters; and the errors of wrong sizes, forms and devices, which never
// show key bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/cipher_batch.hpp"
#include "conformance/devices.hpp"
#include "opkit/buffer.hpp"
#include "opkit/ops/cipher.hpp"

namespace {

using namespace cipher_test;
using opkit::ops::Cipher;
namespace ops = opkit::ops;

OPKIT_CONFORMANCE_OPERATOR_SUITE(CipherDeviceKeys, opkit::ops::cipher_support());

// A batch's keys, IVs and AAD on the device, each `shift` bytes into a buffer of its own.
struct DeviceInputs {
  OnDevice keys, ivs, aad;

  DeviceInputs(const opkit::Device& device, const Batch& b, std::size_t shift = 0)
      : keys(device, b.keys, shift), ivs(device, b.ivs, shift), aad(device, b.aad, shift) {}

  // The batch with its keys, IVs and AAD in device memory only.
  ops::CipherBatch view(const Batch& b) const {
    ops::CipherBatch v = b.view();
    v.keys = {}, v.ivs = {}, v.aad = {};
    v.device_keys = keys.view(), v.device_ivs = ivs.view(), v.device_aad = aad.view();
    return v;
  }
};

// Encrypts b's data through `batch` (b's keys, IVs and AAD in the memory `batch` names), checks
// every message and tag against OpenSSL, decrypts back (in place if encryption was not) and checks
// the plaintext.
void expect_round_trip(const opkit::Device& device, const Batch& b, const ops::CipherBatch& batch, bool in_place,
                       const std::string& what) {
  const std::size_t tag_bytes = aead(b.cipher) ? 16 : 0;
  const ops::CipherOptions options{.chacha20_counter = b.chacha20_counter};
  Bytes sealed, tags(b.count * tag_bytes), opened;
  run_batch(device, b.cipher, batch, true, b.data, sealed, tags, in_place, options);
  for (std::size_t i = 0; i < b.count; ++i) {
    const Sealed want = b.reference(b.data, i);
    ASSERT_EQ(b.slice(sealed, i), want.data) << what << ": message " << i << " of " << b.count;
    ASSERT_EQ(b.part(tags, i, tag_bytes), want.tag) << what << ": tag " << i;
  }
  run_batch(device, b.cipher, batch, false, sealed, opened, tags, !in_place, options);
  ASSERT_EQ(opened, b.data) << what << ": decrypt";
}

std::string describe(const Batch& b, const BatchShape& shape, const std::string& more = "") {
  return name(b.cipher) + " iv " + std::to_string(b.iv_bytes) + (shape.variable ? " offsets" : " fixed") +
         (b.aad.empty() ? "" : " aad") + more;
}

// Every cipher, each IV form (chacha20: OpenSSL's 16 bytes and RFC 8439's 12 with a counter; GCM:
// 12 bytes and another nonce length), fixed and variable layouts, AAD, in place or not.
TEST_P(CipherDeviceKeys, BatchesMatchOpenSslForEveryCipherIvFormAndLayout) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for keys");
  for (const auto& [cipher, iv_bytes] : every_iv_form()) {
    for (bool variable : {false, true}) {
      const BatchShape shape{.variable = variable, .iv_bytes = iv_bytes, .aad = aead(cipher)};
      const Batch b = random_batch(cipher, shape);
      const DeviceInputs inputs(device, b);
      ASSERT_NO_FATAL_FAILURE(expect_round_trip(device, b, inputs.view(b), variable, describe(b, shape)));
    }
  }
}

// Keys and IVs not aligned to the 4-byte words the ChaCha20 kernel loads are copied on the device
// first; the AES kernels read bytes in place at any address.
TEST_P(CipherDeviceKeys, KeysIvsAndAadAtAnyAlignmentMatchOpenSsl) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for keys");
  for (std::size_t shift : {1, 2, 3}) {
    for (const auto& [cipher, iv_bytes] : std::vector<std::pair<Cipher, std::size_t>>{{Cipher::chacha20, 16},
                                                                                      {Cipher::chacha20, 12},
                                                                                      {Cipher::chacha20_poly1305, 12},
                                                                                      {Cipher::aes_192_ctr, 16},
                                                                                      {Cipher::aes_256_gcm, 12}}) {
      const BatchShape shape{.variable = true, .iv_bytes = iv_bytes, .aad = true};
      const Batch b = random_batch(cipher, shape);
      const DeviceInputs inputs(device, b, shift);
      ASSERT_NO_FATAL_FAILURE(
          expect_round_trip(device, b, inputs.view(b), false, describe(b, shape, " shift " + std::to_string(shift))));
    }
  }
}

// Each of keys, IVs and AAD in the memory it is given in, independently of the others.
TEST_P(CipherDeviceKeys, HostAndDeviceInputsMixAsGiven) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for keys");
  for (Cipher cipher : {Cipher::aes_128_gcm, Cipher::aes_256_ctr, Cipher::chacha20, Cipher::chacha20_poly1305}) {
    const BatchShape shape{.variable = true, .aad = aead(cipher)};
    const Batch b = random_batch(cipher, shape);
    const DeviceInputs inputs(device, b);
    ops::CipherBatch device_keys = b.view();
    device_keys.keys = {};
    device_keys.device_keys = inputs.keys.view();
    ASSERT_NO_FATAL_FAILURE(expect_round_trip(device, b, device_keys, true, describe(b, shape, " device keys only")));
    ops::CipherBatch device_ivs_aad = b.view();
    device_ivs_aad.ivs = {}, device_ivs_aad.aad = {};
    device_ivs_aad.device_ivs = inputs.ivs.view(), device_ivs_aad.device_aad = inputs.aad.view();
    ASSERT_NO_FATAL_FAILURE(
        expect_round_trip(device, b, device_ivs_aad, false, describe(b, shape, " device IVs and AAD only")));
  }
}

// AEAD encryption into device tags (GCM's full and truncated lengths, ChaCha20-Poly1305's 16) on a
// stream of its own: with device inputs, and with host inputs scribbled over as soon as the call
// returns (it staged them); everything checked after one wait.
TEST_P(CipherDeviceKeys, AeadTagsIntoDeviceMemoryMatchOpenSsl) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for tags");
  opkit::Stream stream = device.create_stream();
  for (const auto& [cipher, tag_bytes] : std::vector<std::pair<Cipher, std::size_t>>{
           {Cipher::aes_128_gcm, 16}, {Cipher::aes_256_gcm, 12}, {Cipher::chacha20_poly1305, 16}}) {
    for (bool device_inputs : {true, false}) {
      const BatchShape shape{.variable = true, .aad = true};
      Batch b = random_batch(cipher, shape);
      const Batch original = b;
      const DeviceInputs inputs(device, b);
      const OnDevice plain(device, b.data);
      auto sealed = device.alloc<std::uint8_t>(std::max<std::size_t>(b.data.size(), 1));
      auto tags = device.alloc<std::uint8_t>(b.count * tag_bytes);
      device.synchronize();  // the copies above are on the default stream, which `stream` does not wait for
      ops::encrypt_batch(cipher, device_inputs ? inputs.view(b) : b.view(), plain.view(),
                         sealed.view().subview(0, b.data.size()), tags.view(), {.stream = &stream});
      std::fill(b.keys.begin(), b.keys.end(), 0x5A);
      std::fill(b.ivs.begin(), b.ivs.end(), 0xA5);
      std::fill(b.aad.begin(), b.aad.end(), 0x3C);
      stream.synchronize();
      const Bytes got = b.data.empty() ? Bytes{} : sealed.view().subview(0, b.data.size()).to_host();
      const Bytes got_tags = tags.to_host();
      const std::string what = describe(original, shape, device_inputs ? " device inputs" : " host inputs");
      for (std::size_t i = 0; i < b.count; ++i) {
        const Sealed want =
            reference_encrypt(cipher, original.part(original.keys, i, original.key_bytes()), original.reference_iv(i),
                              original.message_aad(i), original.slice(original.data, i), tag_bytes);
        ASSERT_EQ(original.slice(got, i), want.data) << what << ": message " << i;
        ASSERT_EQ(original.part(got_tags, i, tag_bytes), want.tag) << what << ": tag " << i;
      }
    }
  }
}

TEST_P(CipherDeviceKeys, ForgedMessagesAreReportedByIndexAndZeroed) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for keys");
  for (Cipher cipher : ops::all_ciphers()) {
    if (!aead(cipher)) continue;
    const Batch b = random_batch(cipher, {.variable = true, .aad = true});
    const DeviceInputs inputs(device, b);
    const ops::CipherBatch batch = inputs.view(b);
    Bytes sealed, tags(b.count * 16), opened;
    run_batch(device, cipher, batch, true, b.data, sealed, tags, false, {});
    const std::vector<std::size_t> forged = forge_some(b, sealed, tags);
    for (bool in_place : {false, true}) {
      try {
        run_batch(device, cipher, batch, false, sealed, opened, tags, in_place, {});
        FAIL() << name(cipher) << ": forged messages were accepted";
      } catch (const ops::AuthenticationError& e) {
        EXPECT_EQ(e.failed_indices(), forged) << name(cipher);
      }
      expect_forged_zeroed(b, opened, forged, name(cipher) + (in_place ? " in place" : ""));
    }
  }
}

// The AEADs with the tag lengths their batch decryption takes from device memory: ChaCha20-Poly1305's
// 16 bytes, GCM's 16 and a truncated length.
const std::vector<std::pair<Cipher, std::size_t>> aead_tag_forms = {
    {Cipher::chacha20_poly1305, 16}, {Cipher::aes_128_gcm, 16}, {Cipher::aes_256_gcm, 12}};

// A batch of `count` messages of fixed_bytes each (no offsets), with AAD per message.
Batch fixed_batch(Cipher cipher, std::size_t count, std::size_t fixed_bytes) {
  Batch b = random_batch(cipher, {.variable = false, .aad = true});
  b.count = count, b.fixed_bytes = fixed_bytes;
  b.data = random_bytes(count * fixed_bytes);
  b.keys = random_bytes(count * b.key_bytes());
  b.ivs = random_bytes(count * b.iv_bytes);
  b.aad_offsets.assign(1, 0);
  for (std::size_t i = 0; i < count; ++i) b.aad_offsets.push_back(b.aad_offsets.back() + random_below(40));
  b.aad = random_bytes(b.aad_offsets.back());
  return b;
}

// Decryption against expected tags in device memory opens what OpenSSL sealed: fixed lengths that
// put 1, 2, 4 and 8 ChaCha20 threads on a message (0, 1, 63, 64 bytes: one; 65, 129: two; 256:
// four; 1500: eight) in counts that leave the last block of threads partly empty, and offsets
// batches of mixed lengths; keys, IVs and AAD in host or device memory, in place or not.
TEST_P(CipherDeviceKeys, DecryptionWithDeviceTagsOpensOpenSslBatchesOfEveryGroupSizeAndLayout) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for tags");
  for (const auto& [cipher, tag_bytes] : aead_tag_forms) {
    std::vector<Batch> batches;
    for (const std::size_t n : {0, 1, 63, 64, 65, 129, 256, 1500})
      batches.push_back(fixed_batch(cipher, n <= 64 ? 257 : 33 + random_below(40), n));
    batches.push_back(random_batch(cipher, {.variable = true, .aad = true}));
    for (std::size_t k = 0; k < batches.size(); ++k) {
      const Batch& b = batches[k];
      const bool device_inputs = k % 2 == 0, in_place = k % 3 == 0;
      const std::string what = describe(b, {.variable = !b.offsets.empty()},
                                        " of " + std::to_string(b.fixed_bytes) + " bytes, tags of " +
                                            std::to_string(tag_bytes) + (device_inputs ? ", device inputs" : ""));
      const DeviceInputs inputs(device, b);
      Sealed sealed = reference_seal(b, tag_bytes);
      Bytes opened;
      run_batch(device, cipher, device_inputs ? inputs.view(b) : b.view(), false, sealed.data, opened, sealed.tag,
                in_place, {}, true);
      ASSERT_EQ(opened, b.data) << what;
    }
  }
}

// A bit flipped in some messages' ciphertext, tag or AAD, the tags in device memory: the call
// throws AuthenticationError with exactly those indices, their output is zero (in place too: no
// ciphertext or plaintext left) and the others are decrypted.
TEST_P(CipherDeviceKeys, ForgedMessagesAgainstDeviceTagsAreReportedByIndexAndZeroed) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for tags");
  for (const auto& [cipher, tag_bytes] : aead_tag_forms) {
    for (bool variable : {false, true}) {
      const Batch b = variable ? random_batch(cipher, {.variable = true, .aad = true})
                               : fixed_batch(cipher, 40 + random_below(60), 1500);
      Sealed sealed = reference_seal(b, tag_bytes);
      Batch forged_b = b;  // b with the forged AAD
      const std::vector<std::size_t> forged = forge_some(b, sealed.data, sealed.tag, &forged_b.aad, tag_bytes);
      const DeviceInputs inputs(device, forged_b);
      for (bool device_inputs : {false, true}) {
        for (bool in_place : {false, true}) {
          const std::string what = describe(b, {.variable = variable}, in_place ? " in place" : "") +
                                   (device_inputs ? " device inputs" : "");
          Bytes opened;
          try {
            run_batch(device, cipher, device_inputs ? inputs.view(forged_b) : forged_b.view(), false, sealed.data,
                      opened, sealed.tag, in_place, {}, true);
            ADD_FAILURE() << what << ": forged messages were accepted";
          } catch (const ops::AuthenticationError& e) {
            EXPECT_EQ(e.failed_indices(), forged) << what;
          }
          expect_forged_zeroed(b, opened, forged, what);
        }
      }
    }
  }
}

// Device tags written by an encryption are read by a decryption queued behind it on the same
// stream, with no wait between the calls (the decryption waits for its verdicts); a tag forged on
// the device afterwards fails that message alone.
TEST_P(CipherDeviceKeys, DeviceTagsOpenOnTheStreamThatSealedThem) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for tags");
  opkit::Stream stream = device.create_stream();
  for (const auto& [cipher, tag_bytes] : aead_tag_forms) {
    // AES in slices of a few messages, on the call's stream and a side stream that joins it.
    const SmallAesSlices slices(1 + random_below(4));
    const Batch b = random_batch(cipher, {.variable = true, .aad = true});
    const DeviceInputs inputs(device, b);
    const OnDevice plain(device, b.data);
    const std::size_t bytes = b.data.size();
    auto sealed = device.alloc<std::uint8_t>(bytes + 1), opened = device.alloc<std::uint8_t>(bytes + 1);
    auto tags = device.alloc<std::uint8_t>(b.count * tag_bytes);
    device.synchronize();  // the copies above are on the default stream, which `stream` does not wait for
    const auto sealed_view = std::as_const(sealed).view().subview(0, bytes);
    ops::encrypt_batch(cipher, inputs.view(b), plain.view(), sealed.view().subview(0, bytes), tags.view(),
                       {.stream = &stream});
    ops::decrypt_batch(cipher, inputs.view(b), sealed_view, opened.view().subview(0, bytes), std::as_const(tags).view(),
                       {.stream = &stream});
    // The decryption waited for its verdicts only: the plaintext is still being written on
    // `stream`, which the copies to the host (default stream, not blocking it) do not wait for.
    stream.synchronize();
    ASSERT_EQ(bytes == 0 ? Bytes{} : opened.view().subview(0, bytes).to_host(), b.data) << name(cipher);
    ASSERT_EQ(tags.to_host(), reference_seal(b, tag_bytes).tag) << name(cipher);
    const std::size_t victim = random_below(b.count);
    Bytes tag = tags.view().subview(victim * tag_bytes, tag_bytes).to_host();
    tag[random_below(tag_bytes)] ^= 0x04;
    tags.view().subview(victim * tag_bytes, tag_bytes).copy_from(tag);
    try {
      ops::decrypt_batch(cipher, inputs.view(b), sealed_view, opened.view().subview(0, bytes),
                         std::as_const(tags).view(), {.stream = &stream});
      ADD_FAILURE() << name(cipher) << ": a forged device tag was accepted";
    } catch (const ops::AuthenticationError& e) {
      EXPECT_EQ(e.failed_indices(), std::vector<std::size_t>{victim}) << name(cipher);
    }
    stream.synchronize();
    expect_forged_zeroed(b, bytes == 0 ? Bytes{} : opened.view().subview(0, bytes).to_host(), {victim}, name(cipher));
  }
}

// What a chacha20 batch call throws (or "" when it does not), its output left in `out`.
std::string chacha20_error(const opkit::Device& device, const ops::CipherBatch& batch, const Bytes& in, Bytes& out) {
  auto a = device.alloc<std::uint8_t>(in.size()), c = device.alloc<std::uint8_t>(in.size());
  a.view().copy_from(in);
  c.fill(0xAA);
  std::string message;
  try {
    ops::encrypt_batch(Cipher::chacha20, batch, opkit::BufferView<const std::uint8_t>(a.view()), c.view());
  } catch (const opkit::Error& e) {
    message = e.what();
  }
  out = c.to_host();
  return message;
}

// chacha20 with 16-byte IVs in device memory: each message's blocks must fit the 32-bit counter
// from its IV's counter word, checked on the device. A message one block too long is refused with
// the error the host-IV path gives, before any output is written; exact fits and batches of
// single-block messages (which skip the check) run and match OpenSSL.
TEST_P(CipherDeviceKeys, Chacha20CountersOfDeviceIvsAreCheckedOnTheDevice) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for IVs");
  for (bool variable : {false, true}) {
    Batch b = random_batch(Cipher::chacha20, {.variable = variable});
    if (!variable) {  // long enough for two blocks
      b.fixed_bytes = 65 + random_below(200);
      b.data = random_bytes(b.count * b.fixed_bytes);
    } else {
      for (std::size_t i = 0; i < b.count; ++i) b.offsets[i + 1] = b.offsets[i] + 65 + random_below(300);
      b.data = random_bytes(b.offsets.back());
    }
    const std::size_t victim = random_below(b.count);
    const auto set_counter = [&](std::size_t i, std::uint32_t counter) {
      for (int k = 0; k < 4; ++k) b.ivs[16 * i + k] = static_cast<std::uint8_t>(counter >> (8 * k));
    };
    // Exact fits first: counter 2^32 - blocks leaves room for exactly the message.
    for (std::size_t i = 0; i < b.count; ++i)
      set_counter(i, static_cast<std::uint32_t>((std::uint64_t{1} << 32) - (b.end(i) - b.begin(i) + 63) / 64));
    {
      const DeviceInputs inputs(device, b);
      ASSERT_NO_FATAL_FAILURE(expect_round_trip(device, b, inputs.view(b), false, "chacha20 exact counter fits"));
    }
    set_counter(victim, 0xFFFFFFFFu);  // one block of room; every message here has two or more
    const DeviceInputs inputs(device, b);
    Bytes out, host_out;
    const std::string on_device = chacha20_error(device, inputs.view(b), b.data, out);
    const std::string on_host = chacha20_error(device, b.view(), b.data, host_out);
    EXPECT_NE(on_device, "") << "message " << victim << " overruns its counter and was accepted";
    EXPECT_NE(on_device.find("32-bit block counter"), std::string::npos) << on_device;
    EXPECT_EQ(on_device, on_host) << "device and host IVs give different errors";
    EXPECT_EQ(out, Bytes(b.data.size(), 0xAA)) << "output written before the counter check failed";
  }
  // Messages of at most one block fit any counter: the check is skipped and the batch runs.
  Batch b = random_batch(Cipher::chacha20, {.variable = false});
  b.fixed_bytes = 1 + random_below(64);
  b.data = random_bytes(b.count * b.fixed_bytes);
  for (std::size_t i = 0; i < b.count; ++i) std::fill_n(b.ivs.begin() + static_cast<std::ptrdiff_t>(16 * i), 4, 0xFF);
  const DeviceInputs inputs(device, b);
  ASSERT_NO_FATAL_FAILURE(expect_round_trip(device, b, inputs.view(b), true, "chacha20 single blocks at 2^32 - 1"));
}

// The Error a call throws ("" when it does not).
template <class Call>
std::string error_of(Call&& call) {
  try {
    call();
  } catch (const opkit::Error& e) {
    return e.what();
  }
  return "";
}

// Another device than the target's, of a backend that is always there.
opkit::Device other_device(const opkit::Device& device) {
  return opkit::Device::parse(device.id() == "cpu:0" ? "cpu-serial:0" : "cpu:0");
}

TEST_P(CipherDeviceKeys, WrongSizesFormsAndDevicesAreClearErrorsWithoutKeyBytes) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for keys");
  Batch b = random_batch(Cipher::chacha20_poly1305, {.variable = true, .aad = true});
  for (std::size_t i = 0; i < b.keys.size(); ++i) b.keys[i] = static_cast<std::uint8_t>(0xA1 + i % 3);
  const DeviceInputs inputs(device, b);
  const OnDevice data(device, b.data);
  auto out = device.alloc<std::uint8_t>(std::max<std::size_t>(b.data.size(), 1));
  const auto src = data.view();
  const auto dst = out.view().subview(0, b.data.size());
  Bytes tags(b.count * 16);
  const auto encrypt = [&](const ops::CipherBatch& batch) {
    return error_of([&] { ops::encrypt_batch(b.cipher, batch, src, dst, tags); });
  };
  std::vector<std::pair<std::string, std::string>> cases;  // (message, what it must say)

  ops::CipherBatch batch = inputs.view(b);
  batch.device_keys = inputs.keys.view().subview(0, b.keys.size() - 1);
  cases.emplace_back(encrypt(batch), "key bytes, got");
  batch = inputs.view(b);
  batch.device_ivs = inputs.ivs.view().subview(0, b.ivs.size() - 12);
  cases.emplace_back(encrypt(batch), "IV bytes, got");
  batch = inputs.view(b);
  batch.keys = b.keys;
  cases.emplace_back(encrypt(batch), "keys are given twice");
  batch = inputs.view(b);
  batch.device_aad = inputs.aad.view().subview(0, b.aad.size() / 2);
  if (b.aad.size() >= 2) cases.emplace_back(encrypt(batch), "past the AAD's end");
  batch = inputs.view(b);
  Bytes host_out(b.data.size());
  cases.emplace_back(error_of([&] { ops::encrypt_batch(b.cipher, batch, b.data, host_out, tags); }),
                     "device_keys needs the data on that device");
  const opkit::Device elsewhere = other_device(device);
  const OnDevice keys_elsewhere(elsewhere, b.keys);
  batch.device_keys = keys_elsewhere.view();
  cases.emplace_back(encrypt(batch), "device_keys live on " + elsewhere.id());
  batch = inputs.view(b);
  auto tags_elsewhere = elsewhere.alloc<std::uint8_t>(b.count * 16);
  cases.emplace_back(error_of([&] { ops::encrypt_batch(b.cipher, batch, src, dst, tags_elsewhere.view()); }),
                     "another device");
  auto long_tags = device.alloc<std::uint8_t>(b.count * 17);
  cases.emplace_back(error_of([&] { ops::encrypt_batch(b.cipher, batch, src, dst, long_tags.view()); }),
                     "tag of 17 bytes is not allowed");
  // Decryption against device tags: the same rules.
  const auto decrypt = [&](const opkit::BufferView<const std::uint8_t>& expected) {
    return error_of([&] { ops::decrypt_batch(b.cipher, batch, src, dst, expected); });
  };
  cases.emplace_back(decrypt(std::as_const(tags_elsewhere).view()), "another device");
  cases.emplace_back(decrypt(std::as_const(long_tags).view()), "tag of 17 bytes is not allowed");
  if (b.count > 1)
    cases.emplace_back(decrypt(std::as_const(long_tags).view().subview(0, b.count * 16 + 1)),
                       "is not one tag per message");
  ops::CipherBatch no_aad = batch;
  no_aad.device_aad = std::nullopt, no_aad.aad_offsets = {};
  cases.emplace_back(
      error_of([&] { ops::decrypt_batch(Cipher::chacha20, no_aad, src, dst, std::as_const(long_tags).view()); }),
      "chacha20 has no tag");

  for (const auto& [message, says] : cases) {
    EXPECT_NE(message.find(says), std::string::npos) << "expected \"" << says << "\" in: " << message;
    EXPECT_EQ(message.find("a1a2a3"), std::string::npos) << "key bytes in a message: " << message;
    EXPECT_EQ(message.find("A1A2A3"), std::string::npos) << message;
    EXPECT_EQ(message.find("\xA1\xA2\xA3"), std::string::npos) << "raw key bytes in a message";
  }
}

}  // namespace
