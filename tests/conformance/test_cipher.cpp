// Every cipher on every target against OpenSSL EVP called directly (cipher_test_support.hpp), on
// fresh random keys, IVs, AAD and data: bulk messages of the edge lengths and a large one, in
// place or not, through the device-buffer API on a device and the host-data API everywhere
// (host: OpenSSL over the worker threads); batches with a key, IV and AAD per message; and
// forged ciphertexts, tags and AAD, which fail with the failing indices and zeroed output.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "conformance/cipher_batch.hpp"
#include "conformance/devices.hpp"
#include "opkit/buffer.hpp"
#include "opkit/ops/cipher.hpp"
#include "unit/cipher_test_support.hpp"

namespace {

using namespace cipher_test;
using opkit::ops::Cipher;
using opkit::test::Target;
namespace ops = opkit::ops;

OPKIT_CONFORMANCE_OPERATOR_SUITE(Ciphers, opkit::ops::cipher_support());

// "" when equal, else where they first differ (a readable failure for MiB buffers).
std::string difference(const Bytes& got, const Bytes& expected) {
  if (got.size() != expected.size())
    return std::to_string(got.size()) + " bytes, expected " + std::to_string(expected.size());
  const auto at = std::mismatch(got.begin(), got.end(), expected.begin()).first - got.begin();
  if (at == static_cast<std::ptrdiff_t>(got.size())) return "";
  return "first difference at byte " + std::to_string(at) + " of " + std::to_string(got.size());
}

// The edge lengths around AES and ChaCha20 blocks and the CTR kernels' 512-byte thread unit,
// a few random ones, and one large message (larger on a GPU, where it spans the whole device).
std::vector<std::size_t> bulk_lengths(const Target& target) {
  std::vector<std::size_t> lengths = {0, 1, 15, 16, 17, 63, 64, 65, 511, 512, 513};
  for (int i = 0; i < 3; ++i) lengths.push_back(1 + random_below(4096));
  // Host splits a CTR message over threads in MiB ranges: two ranges of whole blocks plus a tail
  // byte (the shape that once lost its last byte).
  lengths.push_back((std::size_t{1} << 20) + 33);
  const std::size_t large = target.device && target.device->is_gpu() ? std::size_t{64} << 20 : std::size_t{1} << 20;
  lengths.push_back(large + random_below(1000));
  return lengths;
}

ops::CipherOptions host_data_options(const Target& target) {
  return {.device = target.device};
}

// One bulk call through the target: device buffers (in place or not) on a device, host data
// through the native path on host. `tag` is written by encrypt and read by decrypt.
void run_bulk(const Target& target, Cipher cipher, bool encrypt, const ops::CipherKey& key, const Bytes& in, Bytes& out,
              Bytes& tag, bool in_place) {
  if (target.is_host()) {
    out = in_place ? in : Bytes(in.size(), 0xAA);
    const std::span<const std::uint8_t> from = in_place ? std::span<const std::uint8_t>(out) : in;
    if (encrypt)
      ops::encrypt(cipher, key, from, out, tag, host_data_options(target));
    else
      ops::decrypt(cipher, key, from, out, tag, host_data_options(target));
    return;
  }
  const opkit::Device& device = *target.device;
  auto a = device.alloc<std::uint8_t>(std::max<std::size_t>(in.size(), 1));
  auto b = device.alloc<std::uint8_t>(std::max<std::size_t>(in.size(), 1));
  if (!in.empty()) a.view().subview(0, in.size()).copy_from(in);
  const auto src = opkit::BufferView<const std::uint8_t>(a.view()).subview(0, in.size());
  const auto dst = (in_place ? a.view() : b.view()).subview(0, in.size());
  std::optional<ops::AuthenticationError> failed;
  try {
    if (encrypt)
      ops::encrypt(cipher, key, src, dst, tag, {});
    else
      ops::decrypt(cipher, key, src, dst, tag, {});
  } catch (const ops::AuthenticationError& e) {
    failed = e;
  }
  out = in.empty() ? Bytes{} : dst.to_host();
  if (failed) throw *failed;
}

TEST_P(Ciphers, BulkMatchesOpenSslOnEdgeAndLargeLengthsInPlaceOrNot) {
  for (Cipher cipher : ops::all_ciphers()) {
    for (std::size_t len : bulk_lengths(target())) {
      const bool in_place = len % 2 == 1;
      const Bytes key = random_bytes(ops::cipher_traits(cipher).key_bytes);
      const Bytes iv = random_iv(cipher, /*odd_gcm_nonce=*/len % 3 == 0);
      const Bytes aad = aead(cipher) ? random_bytes(random_below(48)) : Bytes{};
      const Bytes plain = random_bytes(len);
      const Sealed expected = reference_encrypt(cipher, key, iv, aad, plain);
      const ops::CipherKey k{key, iv, aad};
      Bytes sealed, tag(expected.tag.size()), opened;
      run_bulk(target(), cipher, true, k, plain, sealed, tag, in_place);
      ASSERT_EQ(difference(sealed, expected.data), "") << name(cipher) << (in_place ? " in place" : "");
      ASSERT_EQ(tag, expected.tag) << name(cipher) << " length " << len;
      run_bulk(target(), cipher, false, k, sealed, opened, tag, !in_place);
      ASSERT_EQ(difference(opened, plain), "") << name(cipher) << " decrypt" << (in_place ? "" : " in place");
    }
  }
}

// Ciphertexts of all-ones and all-zero bytes (plaintext = keystream XOR the pattern), with AAD of
// the same pattern: the MACs' largest and smallest inputs. All-ones blocks put every Poly1305 limb
// at its maximum (2^26 - 1; the carries and the 64-bit column sums at their bounds) and give GHASH
// its densest operands. The length covers several thread blocks of 256-byte pieces of the
// ChaCha20-Poly1305 kernels plus a short tail.
TEST_P(Ciphers, AeadsMatchOpenSslOnAllOnesAndAllZeroCiphertexts) {
  const std::size_t len = 2 * 256 * 256 + 3 * 256 + 7;
  for (Cipher cipher : {Cipher::chacha20_poly1305, Cipher::aes_128_gcm, Cipher::aes_256_gcm}) {
    for (std::uint8_t pattern : {std::uint8_t{0xFF}, std::uint8_t{0x00}}) {
      const Bytes key = random_bytes(ops::cipher_traits(cipher).key_bytes), iv = random_iv(cipher);
      const Bytes aad(64, pattern);
      Bytes plain = reference_encrypt(cipher, key, iv, aad, Bytes(len, 0)).data;  // the keystream
      for (std::uint8_t& byte : plain) byte ^= pattern;
      const Sealed expected = reference_encrypt(cipher, key, iv, aad, plain);
      ASSERT_EQ(expected.data, Bytes(len, pattern));
      const ops::CipherKey k{key, iv, aad};
      Bytes sealed, tag(expected.tag.size()), opened;
      run_bulk(target(), cipher, true, k, plain, sealed, tag, false);
      ASSERT_EQ(difference(sealed, expected.data), "") << name(cipher);
      ASSERT_EQ(tag, expected.tag) << name(cipher) << " pattern " << int{pattern};
      run_bulk(target(), cipher, false, k, sealed, opened, tag, false);
      ASSERT_EQ(difference(opened, plain), "") << name(cipher) << " decrypt";
    }
  }
}

// Host memory through a device: copied there and back on a GPU, run in place on the CPU backend.
TEST_P(Ciphers, HostDataThroughTheTargetMatchesOpenSsl) {
  for (Cipher cipher : ops::all_ciphers()) {
    const std::size_t len = 1 + random_below(70000);
    const Bytes key = random_bytes(ops::cipher_traits(cipher).key_bytes), iv = random_iv(cipher);
    const Bytes aad = aead(cipher) ? random_bytes(1 + random_below(40)) : Bytes{}, plain = random_bytes(len);
    const Sealed expected = reference_encrypt(cipher, key, iv, aad, plain);
    Bytes sealed(len), tag(expected.tag.size()), opened(len);
    ops::encrypt(cipher, {key, iv, aad}, plain, sealed, tag, host_data_options(target()));
    ASSERT_EQ(difference(sealed, expected.data), "") << name(cipher);
    ASSERT_EQ(tag, expected.tag) << name(cipher);
    ops::decrypt(cipher, {key, iv, aad}, sealed, opened, tag, host_data_options(target()));
    ASSERT_EQ(difference(opened, plain), "") << name(cipher);
  }
}

// One batch call through the target (device buffers, in place or not, or host data on host);
// the output comes back whether or not the call throws.
void run_batch(const Target& target, const Batch& b, bool encrypt, const Bytes& in, Bytes& out, Bytes& tags,
               bool in_place) {
  if (target.is_host()) {
    out = in_place ? in : Bytes(in.size(), 0xAA);
    const std::span<const std::uint8_t> from = in_place ? std::span<const std::uint8_t>(out) : in;
    if (encrypt)
      ops::encrypt_batch(b.cipher, b.view(), from, out, tags, host_data_options(target));
    else
      ops::decrypt_batch(b.cipher, b.view(), from, out, tags, host_data_options(target));
    return;
  }
  cipher_test::run_batch(*target.device, b.cipher, b.view(), encrypt, in, out, tags, in_place, {});
}

TEST_P(Ciphers, BatchesWithPerMessageKeysMatchOpenSsl) {
  for (Cipher cipher : ops::all_ciphers()) {
    for (bool variable : {false, true}) {
      const Batch b = random_batch(cipher, variable);
      const bool in_place = variable;
      const std::size_t tag_bytes = aead(cipher) ? 16 : 0;
      Bytes sealed, tags(b.count * tag_bytes), opened;
      run_batch(target(), b, true, b.data, sealed, tags, in_place);
      for (std::size_t i = 0; i < b.count; ++i) {
        const Sealed expected = reference_encrypt(cipher, b.part(b.keys, i, ops::cipher_traits(cipher).key_bytes),
                                                  b.part(b.ivs, i, b.iv_bytes), b.message_aad(i), b.slice(b.data, i));
        ASSERT_EQ(b.slice(sealed, i), expected.data) << name(cipher) << " message " << i << " of " << b.count;
        ASSERT_EQ(b.part(tags, i, tag_bytes), expected.tag) << name(cipher) << " message " << i;
      }
      run_batch(target(), b, false, sealed, opened, tags, !in_place);
      ASSERT_EQ(difference(opened, b.data), "") << name(cipher) << (variable ? " variable" : " fixed") << " decrypt";
    }
  }
}

// A batch of the given message lengths: fixed (all equal: no offsets) or with offsets and, for
// the AEAD, AAD per message.
Batch batch_of_lengths(Cipher cipher, const std::vector<std::size_t>& lengths, bool fixed) {
  Batch b{cipher, lengths.size(), fixed ? lengths.front() : 0, {}, {}, {}, {}, {}, {}, 0};
  b.iv_bytes = aead(cipher) ? 12 : 16;
  if (!fixed) {
    b.offsets.push_back(0);
    for (const std::size_t n : lengths) b.offsets.push_back(b.offsets.back() + n);
  }
  b.data = random_bytes(fixed ? b.count * b.fixed_bytes : b.offsets.back());
  b.keys = random_bytes(b.count * ops::cipher_traits(cipher).key_bytes);
  for (std::size_t i = 0; i < b.count; ++i) {
    const Bytes iv = random_iv(cipher);
    b.ivs.insert(b.ivs.end(), iv.begin(), iv.end());
  }
  if (aead(cipher) && !fixed) {
    b.aad_offsets.push_back(0);
    for (std::size_t i = 0; i < b.count; ++i) b.aad_offsets.push_back(b.aad_offsets.back() + random_below(70));
    b.aad = random_bytes(b.aad_offsets.back());
  }
  return b;
}

// The ChaCha20 batch kernel puts G threads on a message (the host picks G from the mean length:
// 1 for one 64-byte block, 8 for 1500 bytes) and 256 / G messages in a block of threads: fixed
// lengths around the 64-byte blocks and the group's rounds, in counts that leave the last block of
// threads partly empty, and offsets batches that mix lengths 0 to several rounds of the group
// under one G; in place and not, sealed against OpenSSL and opened back.
TEST_P(Ciphers, ChaCha20BatchesOfEdgeLengthsAndCountsMatchOpenSsl) {
  const std::vector<std::vector<std::size_t>> fixed_shapes = {
      std::vector<std::size_t>(257, 0),   std::vector<std::size_t>(257, 1),   std::vector<std::size_t>(257, 63),
      std::vector<std::size_t>(257, 64),  std::vector<std::size_t>(129, 65),  std::vector<std::size_t>(129, 127),
      std::vector<std::size_t>(65, 129),  std::vector<std::size_t>(65, 255),  std::vector<std::size_t>(65, 257),
      std::vector<std::size_t>(33, 511),  std::vector<std::size_t>(33, 513),  std::vector<std::size_t>(33, 1500),
      std::vector<std::size_t>(31, 1500), std::vector<std::size_t>(45, 1536), std::vector<std::size_t>(7, 5000)};
  std::vector<std::vector<std::size_t>> mixed_shapes = {
      {0, 1, 63, 64, 65, 511, 512, 513, 1535, 1536, 1537, 1500, 1500, 5000, 3000, 1, 0},  // mean ~1100: G = 8
      {0, 1500, 17, 64, 2000, 1499, 1501, 128, 129, 127}};
  for (int extra = 0; extra < 37; ++extra) mixed_shapes[1].push_back(random_below(3000));
  for (Cipher cipher : {Cipher::chacha20, Cipher::chacha20_poly1305}) {
    for (bool fixed : {true, false}) {
      for (const std::vector<std::size_t>& lengths : fixed ? fixed_shapes : mixed_shapes) {
        const Batch b = batch_of_lengths(cipher, lengths, fixed);
        const std::string shape = name(cipher) + (fixed ? " fixed " : " mixed ") + std::to_string(b.count) +
                                  " messages, the first of " + std::to_string(lengths.front()) + " bytes";
        const std::size_t tag_bytes = aead(cipher) ? 16 : 0;
        for (bool in_place : {false, true}) {
          Bytes sealed, tags(b.count * tag_bytes), opened;
          run_batch(target(), b, true, b.data, sealed, tags, in_place);
          for (std::size_t i = 0; i < b.count; ++i) {
            const Sealed expected = reference_encrypt(cipher, b.part(b.keys, i, 32), b.part(b.ivs, i, b.iv_bytes),
                                                      b.message_aad(i), b.slice(b.data, i));
            ASSERT_EQ(b.slice(sealed, i), expected.data) << shape << ": message " << i;
            ASSERT_EQ(b.part(tags, i, tag_bytes), expected.tag) << shape << ": tag " << i;
          }
          run_batch(target(), b, false, sealed, opened, tags, !in_place);
          ASSERT_EQ(difference(opened, b.data), "") << shape << ": opened";
        }
      }
    }
  }
}

// A flipped bit in ciphertext, tag or AAD: AuthenticationError, and no plaintext released.
TEST_P(Ciphers, ForgedBulkMessagesFailAndReleaseNothing) {
  for (Cipher cipher : ops::all_ciphers()) {
    if (!aead(cipher)) continue;
    const std::size_t len = 1 + random_below(3000);
    const Bytes key = random_bytes(ops::cipher_traits(cipher).key_bytes), iv = random_iv(cipher);
    const Bytes plain = random_bytes(len);
    for (int where = 0; where < 3; ++where) {
      Bytes aad = random_bytes(1 + random_below(40));
      Sealed sealed = reference_encrypt(cipher, key, iv, aad, plain);
      Bytes& victim = where == 0 ? sealed.data : (where == 1 ? sealed.tag : aad);
      victim[random_below(victim.size())] ^= static_cast<std::uint8_t>(1u << random_below(8));
      for (bool in_place : {false, true}) {
        Bytes out;
        try {
          run_bulk(target(), cipher, false, {key, iv, aad}, sealed.data, out, sealed.tag, in_place);
          FAIL() << name(cipher) << ": a forged "
                 << (where == 0   ? "ciphertext"
                     : where == 1 ? "tag"
                                  : "AAD")
                 << " was accepted";
        } catch (const ops::AuthenticationError& e) {
          EXPECT_EQ(e.failed_indices(), std::vector<std::size_t>{0});
        }
        EXPECT_EQ(out, Bytes(len, 0)) << name(cipher) << ": output not zeroed" << (in_place ? " (in place)" : "");
      }
    }
  }
}

TEST_P(Ciphers, ForgedBatchMessagesAreReportedByIndexAndZeroed) {
  for (Cipher cipher : ops::all_ciphers()) {
    if (!aead(cipher)) continue;
    const Batch b = random_batch(cipher, true);
    Bytes sealed, tags(b.count * 16), opened;
    run_batch(target(), b, true, b.data, sealed, tags, false);
    const std::vector<std::size_t> forged = forge_some(b, sealed, tags);
    for (bool in_place : {false, true}) {
      try {
        run_batch(target(), b, false, sealed, opened, tags, in_place);
        FAIL() << name(cipher) << ": forged messages were accepted";
      } catch (const ops::AuthenticationError& e) {
        EXPECT_EQ(e.failed_indices(), forged) << name(cipher);
      }
      expect_forged_zeroed(b, opened, forged, name(cipher) + (in_place ? " in place" : ""));
    }
  }
}

// Calls on a stream of their own: CTR and ChaCha20 return with their work queued, the AEADs once
// their tags are known. Bulk calls and a batch run back to back with no wait between them, each
// call's key and IV scribbled over as soon as it returns (a call has taken them by then), and
// every result is checked after one wait at the end.
TEST_P(Ciphers, CallsQueuedOnAStreamTakeTheirKeysAtOnceAndMatchOpenSsl) {
  if (target().is_host()) GTEST_SKIP() << "host data runs through OpenSSL; streams order device buffers";
  const opkit::Device& device = *target().device;
  opkit::Stream stream = device.create_stream();
  const ops::CipherOptions on_stream{.stream = &stream};
  constexpr std::size_t calls = 6;
  for (Cipher cipher : ops::all_ciphers()) {
    const std::size_t len = (device.is_gpu() ? std::size_t{4} << 20 : std::size_t{1} << 16) + random_below(1000);
    std::vector<Bytes> plains, keys, ivs, aads;
    std::vector<Sealed> expected;
    auto plain_dev = device.alloc<std::uint8_t>(calls * len);
    auto sealed_dev = device.alloc<std::uint8_t>(calls * len);
    auto opened_dev = device.alloc<std::uint8_t>(calls * len);
    for (std::size_t i = 0; i < calls; ++i) {
      plains.push_back(random_bytes(len));
      keys.push_back(random_bytes(ops::cipher_traits(cipher).key_bytes));
      ivs.push_back(random_iv(cipher));
      aads.push_back(aead(cipher) ? random_bytes(random_below(40)) : Bytes{});
      expected.push_back(reference_encrypt(cipher, keys[i], ivs[i], aads[i], plains[i]));
      plain_dev.view().subview(i * len, len).copy_from(plains[i]);
    }
    device.synchronize();  // the uploads above are on the default stream, which `stream` does not wait for
    auto part = [&](opkit::DeviceBuffer<std::uint8_t>& buffer, std::size_t i) {
      return buffer.view().subview(i * len, len);
    };
    std::vector<Bytes> tags(calls, Bytes(expected[0].tag.size()));
    for (std::size_t i = 0; i < calls; ++i) {
      Bytes key = keys[i], iv = ivs[i];
      ops::encrypt(cipher, {key, iv, aads[i]}, opkit::BufferView<const std::uint8_t>(part(plain_dev, i)),
                   part(sealed_dev, i), tags[i], on_stream);
      std::fill(key.begin(), key.end(), 0x5A);
      std::fill(iv.begin(), iv.end(), 0xA5);
      Bytes key2 = keys[i], iv2 = ivs[i];
      ops::decrypt(cipher, {key2, iv2, aads[i]}, opkit::BufferView<const std::uint8_t>(part(sealed_dev, i)),
                   part(opened_dev, i), tags[i], on_stream);
      std::fill(key2.begin(), key2.end(), 0x5A);
      std::fill(iv2.begin(), iv2.end(), 0xA5);
    }
    Batch b = random_batch(cipher, /*variable=*/true);
    const std::size_t batch_bytes = std::max<std::size_t>(b.data.size(), 1);
    auto batch_in = device.alloc<std::uint8_t>(batch_bytes), batch_out = device.alloc<std::uint8_t>(batch_bytes);
    if (!b.data.empty()) batch_in.view().subview(0, b.data.size()).copy_from(b.data);
    device.synchronize();
    Bytes batch_tags(aead(cipher) ? b.count * 16 : 0);
    const Bytes batch_keys = b.keys;
    ops::encrypt_batch(cipher, b.view(),
                       opkit::BufferView<const std::uint8_t>(batch_in.view()).subview(0, b.data.size()),
                       batch_out.view().subview(0, b.data.size()), batch_tags, on_stream);
    std::fill(b.keys.begin(), b.keys.end(), 0x5A);
    stream.synchronize();

    for (std::size_t i = 0; i < calls; ++i) {
      ASSERT_EQ(difference(part(sealed_dev, i).to_host(), expected[i].data), "") << name(cipher) << " call " << i;
      ASSERT_EQ(tags[i], expected[i].tag) << name(cipher) << " call " << i;
      ASSERT_EQ(difference(part(opened_dev, i).to_host(), plains[i]), "") << name(cipher) << " decrypt " << i;
    }
    const Bytes batch_sealed = b.data.empty() ? Bytes{} : batch_out.view().subview(0, b.data.size()).to_host();
    for (std::size_t i = 0; i < b.count; ++i) {
      const Sealed want = reference_encrypt(cipher, b.part(batch_keys, i, ops::cipher_traits(cipher).key_bytes),
                                            b.part(b.ivs, i, b.iv_bytes), b.message_aad(i), b.slice(b.data, i));
      ASSERT_EQ(b.slice(batch_sealed, i), want.data) << name(cipher) << " batch message " << i;
      if (aead(cipher)) {
        ASSERT_EQ(b.part(batch_tags, i, 16), want.tag) << name(cipher) << " batch message " << i;
      }
    }
  }
}

// AEAD encryption with the tag in device memory: the call returns with everything queued on its
// stream (no wait: the AAD of up to 256 bytes travels as a kernel parameter, the tag stays on the
// device), the caller's key, IV and AAD scribbled over at once; after one wait, ciphertext and
// tag match OpenSSL. AAD lengths on both sides of the 256-byte parameter limit and empty data.
TEST_P(Ciphers, AeadEncryptionIntoADeviceTagQueuesEverythingAndMatchesOpenSsl) {
  if (target().is_host()) GTEST_SKIP() << "a device tag is device memory";
  const opkit::Device& device = *target().device;
  opkit::Stream stream = device.create_stream();
  for (Cipher cipher : {Cipher::aes_128_gcm, Cipher::aes_256_gcm, Cipher::chacha20_poly1305}) {
    for (std::size_t aad_len :
         {std::size_t{0}, std::size_t{13}, std::size_t{256}, std::size_t{257} + random_below(600)}) {
      for (std::size_t len : {std::size_t{0}, std::size_t{1} + random_below(5000), std::size_t{1} << 16}) {
        const Bytes key = random_bytes(ops::cipher_traits(cipher).key_bytes), iv = random_iv(cipher);
        const Bytes aad = random_bytes(aad_len), plain = random_bytes(len);
        const Sealed expected = reference_encrypt(cipher, key, iv, aad, plain);
        auto in = device.alloc<std::uint8_t>(std::max<std::size_t>(len, 1));
        auto out = device.alloc<std::uint8_t>(std::max<std::size_t>(len, 1));
        auto tag = device.alloc<std::uint8_t>(16);
        if (len != 0) in.view().subview(0, len).copy_from(plain);
        device.synchronize();
        Bytes k = key, v = iv, a = aad;
        ops::encrypt(cipher, {k, v, a}, opkit::BufferView<const std::uint8_t>(in.view()).subview(0, len),
                     out.view().subview(0, len), tag.view().subview(0, expected.tag.size()), {.stream = &stream});
        std::fill(k.begin(), k.end(), 0x5A);
        std::fill(v.begin(), v.end(), 0xA5);
        std::fill(a.begin(), a.end(), 0x3C);
        stream.synchronize();
        const std::string where = name(cipher) + " aad " + std::to_string(aad_len) + " length " + std::to_string(len);
        ASSERT_EQ(difference(len == 0 ? Bytes{} : out.view().subview(0, len).to_host(), expected.data), "") << where;
        ASSERT_EQ(tag.view().subview(0, expected.tag.size()).to_host(), expected.tag) << where;
      }
    }
  }
}

}  // namespace
