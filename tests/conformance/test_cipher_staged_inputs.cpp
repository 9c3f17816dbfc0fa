// Cipher batches whose host keys, IVs and AAD stream to the device in chunks of messages through
// pinned staging (src/ops/cipher/batch_inputs.hpp: a batch of more than
// StageSizes::chunk_messages of stage_sizes.hpp), against OpenSSL EVP called directly. The chunk
// and the staging ring are made small, so that a few dozen messages take many chunks, a key or an
// AAD is split between slots and the ring wraps within a call: every cipher and IV form, fixed and
// variable layouts, AAD, in place or not, host or device tags; forged messages on both sides of
// chunk boundaries reported by index and zeroed; calls queued on a stream with their host inputs
// scribbled over as soon as they return; host inputs beside device inputs written on the call's
// stream; batches over the default chunk of 2^16 messages, and a GCM batch of two AES slices with
// forged messages on both sides of the slice boundary. Each on every device target, the
// cpu-deferred test backend among them, whose streams order work as a GPU's do
// (tests/backends/cpu_deferred): there a missing wait between the staging stream and the call's
// shows without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "conformance/cipher_batch.hpp"
#include "conformance/devices.hpp"
#include "opkit/buffer.hpp"
#include "opkit/ops/cipher.hpp"
#include "ops/cipher/stage_sizes.hpp"

namespace {

using namespace cipher_test;
using opkit::ops::Cipher;
using opkit::ops::detail::StageSizes;
namespace ops = opkit::ops;

OPKIT_CONFORMANCE_OPERATOR_SUITE(CipherStagedInputs, opkit::ops::cipher_support());

// Chunks of `chunk` messages through `slots` staging slots of `slot_bytes` while it lives; the
// sizes before it afterwards.
class SmallStages {
 public:
  SmallStages(std::size_t chunk, std::size_t slot_bytes, std::size_t slots)
      : saved_(opkit::ops::detail::stage_sizes()) {
    opkit::ops::detail::set_stage_sizes({.chunk_messages = chunk, .ring = {.slot_bytes = slot_bytes, .slots = slots}});
  }
  ~SmallStages() { opkit::ops::detail::set_stage_sizes(saved_); }
  SmallStages(const SmallStages&) = delete;
  SmallStages& operator=(const SmallStages&) = delete;

 private:
  StageSizes saved_;
};

// Random small sizes: chunks of 1 to 9 messages, one to four slots of 16 to 215 bytes.
SmallStages random_small_stages(std::string& what) {
  const std::size_t chunk = 1 + random_below(9), slot_bytes = 16 + random_below(200), slots = 1 + random_below(4);
  what += ", chunks of " + std::to_string(chunk) + " through " + std::to_string(slots) + " slots of " +
          std::to_string(slot_bytes) + " bytes";
  return {chunk, slot_bytes, slots};
}

std::string describe(const Batch& b) {
  return name(b.cipher) + " iv " + std::to_string(b.iv_bytes) + (b.offsets.empty() ? " fixed" : " offsets") +
         (b.aad.empty() ? "" : " aad") + ", " + std::to_string(b.count) + " messages";
}

// Encrypts b's data through `batch`, checks every message and tag against OpenSSL, decrypts back
// (in place if encryption was not) and checks the plaintext. Tags in host or device memory.
void expect_round_trip(const opkit::Device& device, const Batch& b, const ops::CipherBatch& batch, bool in_place,
                       bool device_tags, const std::string& what) {
  const std::size_t tag_bytes = aead(b.cipher) ? 16 : 0;
  const ops::CipherOptions options{.chacha20_counter = b.chacha20_counter};
  Bytes sealed, tags(b.count * tag_bytes), opened;
  run_batch(device, b.cipher, batch, true, b.data, sealed, tags, in_place, options, device_tags);
  for (std::size_t i = 0; i < b.count; ++i) {
    const Sealed want = b.reference(b.data, i);
    ASSERT_EQ(b.slice(sealed, i), want.data) << what << ": message " << i;
    ASSERT_EQ(b.part(tags, i, tag_bytes), want.tag) << what << ": tag " << i;
  }
  run_batch(device, b.cipher, batch, false, sealed, opened, tags, !in_place, options, device_tags);
  ASSERT_EQ(opened, b.data) << what << ": decrypt";
}

// Every cipher and IV form (chacha20: 16-byte IVs and 12-byte nonces with a counter; GCM: 12
// bytes and other nonce lengths), fixed and variable layouts, AAD for the AEADs, host and device
// tags, in place or not.
void batches_over_many_chunks(const opkit::Device& device) {
  for (const auto& [cipher, iv_bytes] : every_iv_form()) {
    for (bool variable : {false, true}) {
      const Batch b = random_batch(
          cipher, {.variable = variable, .iv_bytes = iv_bytes, .aad = aead(cipher), .count = 20 + random_below(60)});
      for (bool device_tags : aead(cipher) ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
        std::string what = describe(b) + (device_tags ? ", device tags" : "");
        const SmallStages stages = random_small_stages(what);
        ASSERT_NO_FATAL_FAILURE(expect_round_trip(device, b, b.view(), variable, device_tags, what));
      }
    }
  }
}

// The messages around every chunk boundary, and the first and last, forged (the ciphertext or
// the tag): decryption throws AuthenticationError with exactly those indices, zeroes their
// output and opens the others, whether the expected tags are host or device memory.
void forged_messages_at_chunk_boundaries(const opkit::Device& device) {
  for (const auto& [cipher, tag_bytes] : std::vector<std::pair<Cipher, std::size_t>>{
           {Cipher::chacha20_poly1305, 16}, {Cipher::aes_128_gcm, 16}, {Cipher::aes_256_gcm, 12}}) {
    for (bool variable : {false, true}) {
      const Batch b = random_batch(cipher, {.variable = variable, .aad = true, .count = 30 + random_below(40)});
      const std::size_t chunk = 2 + random_below(6);
      std::string what = describe(b);
      const SmallStages stages(chunk, 16 + random_below(100), 1 + random_below(4));
      what += ", chunks of " + std::to_string(chunk);
      Sealed sealed = reference_seal(b, tag_bytes);
      std::vector<std::size_t> forged;
      for (std::size_t i = 0; i < b.count; ++i)
        if (i % chunk == 0 || i % chunk == chunk - 1 || i + 1 == b.count) forged.push_back(i);
      for (std::size_t i : forged) {
        const std::size_t n = b.end(i) - b.begin(i);
        if (i % 2 == 0 && n != 0)
          sealed.data[b.begin(i) + random_below(n)] ^= 0x20;
        else
          sealed.tag[i * tag_bytes + random_below(tag_bytes)] ^= 0x01;
      }
      for (bool device_tags : {false, true}) {
        for (bool in_place : {false, true}) {
          const std::string where =
              what + (device_tags ? ", device tags" : ", host tags") + (in_place ? ", in place" : "");
          Bytes opened;
          try {
            run_batch(device, cipher, b.view(), false, sealed.data, opened, sealed.tag, in_place, {}, device_tags);
            ADD_FAILURE() << where << ": forged messages were accepted";
          } catch (const ops::AuthenticationError& e) {
            EXPECT_EQ(e.failed_indices(), forged) << where;
          }
          expect_forged_zeroed(b, opened, forged, where);
        }
      }
    }
  }
}

// Batches queued on a stream of their own, back to back, each call's host keys, IVs and AAD
// scribbled over as soon as it returns (it has read them by then): ChaCha20 and CTR return with
// their kernels queued, the AEADs encrypt into device tags; everything checked after one wait.
void queued_calls_take_their_inputs(const opkit::Device& device) {
  opkit::Stream stream = device.create_stream();
  for (Cipher cipher : ops::all_ciphers()) {
    constexpr int calls = 3;
    std::vector<Batch> batches;
    std::vector<OnDevice> plains, sealed, tags;
    for (int c = 0; c < calls; ++c) {
      batches.push_back(
          random_batch(cipher, {.variable = c % 2 == 1, .aad = aead(cipher), .count = 20 + random_below(40)}));
      plains.emplace_back(device, batches.back().data);
      sealed.emplace_back(device, Bytes(batches.back().data.size()));
      tags.emplace_back(device, Bytes(batches.back().count * (aead(cipher) ? 16 : 0)));
    }
    device.synchronize();  // the copies above are on the default stream, which `stream` does not wait for
    std::string what = name(cipher);
    const SmallStages stages = random_small_stages(what);
    for (int c = 0; c < calls; ++c) {
      Batch scribbled = batches[c];
      if (aead(cipher))
        ops::encrypt_batch(cipher, scribbled.view(), plains[c].view(), sealed[c].view(), tags[c].view(),
                           {.stream = &stream});
      else
        ops::encrypt_batch(cipher, scribbled.view(), plains[c].view(), sealed[c].view(), {}, {.stream = &stream});
      std::fill(scribbled.keys.begin(), scribbled.keys.end(), 0x5A);
      std::fill(scribbled.ivs.begin(), scribbled.ivs.end(), 0xA5);
      std::fill(scribbled.aad.begin(), scribbled.aad.end(), 0x3C);
    }
    stream.synchronize();
    for (int c = 0; c < calls; ++c) {
      const Batch& b = batches[c];
      const Bytes got = b.data.empty() ? Bytes{} : std::as_const(sealed[c]).view().to_host();
      const Bytes got_tags = b.count == 0 || !aead(cipher) ? Bytes{} : std::as_const(tags[c]).view().to_host();
      for (std::size_t i = 0; i < b.count; ++i) {
        const Sealed want = b.reference(b.data, i);
        ASSERT_EQ(b.slice(got, i), want.data) << what << ", call " << c << ": message " << i;
        ASSERT_EQ(b.part(got_tags, i, want.tag.size()), want.tag) << what << ", call " << c << ": tag " << i;
      }
    }
  }
}

// Host inputs streamed beside device inputs that the caller wrote on the call's stream just
// before the call: device keys not aligned for ChaCha20's word loads (copied on the device into
// the call's secret, behind the caller's stream) with host IVs and AAD; and device IVs and AAD
// with host keys. On a stream of its own; checked after one wait.
void host_inputs_beside_device_inputs(const opkit::Device& device) {
  opkit::Stream stream = device.create_stream();
  for (Cipher cipher : {Cipher::chacha20, Cipher::chacha20_poly1305, Cipher::aes_192_ctr, Cipher::aes_256_gcm}) {
    for (int round = 0; round < 8; ++round) {
      const Batch b = random_batch(cipher, {.variable = true, .aad = aead(cipher), .count = 20 + random_below(40)});
      std::string what = describe(b);
      const SmallStages stages = random_small_stages(what);
      for (bool device_keys : {true, false}) {
        OnDevice keys(device, Bytes(b.keys.size()), 1), ivs(device, Bytes(b.ivs.size())),
            aad(device, Bytes(b.aad.size()));
        OnDevice plain(device, b.data), sealed(device, Bytes(b.data.size())),
            tags(device, Bytes(aead(cipher) ? b.count * 16 : 0));
        device.synchronize();  // the copies above are on the default stream, which `stream` does not wait for
        ops::CipherBatch batch = b.view();
        if (device_keys) {
          keys.view().copy_from(b.keys, &stream);
          batch.keys = {};
          batch.device_keys = std::as_const(keys).view();
        } else {
          ivs.view().copy_from(b.ivs, &stream);
          aad.view().copy_from(b.aad, &stream);
          batch.ivs = {}, batch.aad = {};
          batch.device_ivs = std::as_const(ivs).view(), batch.device_aad = std::as_const(aad).view();
        }
        if (aead(cipher))
          ops::encrypt_batch(cipher, batch, std::as_const(plain).view(), sealed.view(), tags.view(),
                             {.stream = &stream});
        else
          ops::encrypt_batch(cipher, batch, std::as_const(plain).view(), sealed.view(), {}, {.stream = &stream});
        stream.synchronize();
        const std::string where = what + (device_keys ? ", unaligned device keys" : ", device IVs and AAD");
        const Bytes got = b.data.empty() ? Bytes{} : std::as_const(sealed).view().to_host();
        const Bytes got_tags = aead(cipher) ? std::as_const(tags).view().to_host() : Bytes{};
        for (std::size_t i = 0; i < b.count; ++i) {
          const Sealed want = b.reference(b.data, i);
          ASSERT_EQ(b.slice(got, i), want.data) << where << ": message " << i;
          ASSERT_EQ(b.part(got_tags, i, want.tag.size()), want.tag) << where << ": tag " << i;
        }
      }
    }
  }
}

// AES-GCM runs a batch in slices of 2^18 messages, each asking for its keys before its kernels:
// a batch of two slices and the default chunks, forged on both sides of the slice boundary and of
// chunk boundaries, reports exactly those messages from the one verdict copy after the last slice.
void forged_gcm_messages_in_two_slices(const opkit::Device& device) {
  const std::size_t slice = std::size_t{1} << 18, chunk = opkit::ops::detail::stage_sizes().chunk_messages;
  Batch b =
      random_batch(Cipher::aes_128_gcm, {.variable = false, .aad = true, .count = slice + 4 + random_below(3000)});
  const Sealed sealed = reference_seal(b);
  Bytes tags = sealed.tag;
  // Message 1 forged and slice + 1 not, slice + 2 and not 2: a slice reading another's verdicts
  // shows.
  const std::vector<std::size_t> forged = {0, 1, chunk - 1, chunk, slice - 1, slice, slice + 2, b.count - 1};
  for (std::size_t i : forged) tags[16 * i + random_below(16)] ^= 0x02;
  Bytes opened;
  try {
    run_batch(device, b.cipher, b.view(), false, sealed.data, opened, tags, false, {});
    ADD_FAILURE() << describe(b) << ": forged messages were accepted";
  } catch (const ops::AuthenticationError& e) {
    EXPECT_EQ(e.failed_indices(), forged) << describe(b);
  }
  expect_forged_zeroed(b, opened, forged, describe(b));
}

// The default sizes: a batch of more than 2^16 messages streams in chunks of 2^16 through 1 MiB
// slots (the host copies into them over the cores).
void batches_over_the_default_chunk(const opkit::Device& device) {
  for (Cipher cipher : {Cipher::chacha20, Cipher::chacha20_poly1305, Cipher::aes_128_ctr}) {
    const std::size_t count = opkit::ops::detail::stage_sizes().chunk_messages + 1 + random_below(40000);
    const Batch b = random_batch(cipher, {.variable = false, .aad = aead(cipher), .count = count});
    ASSERT_NO_FATAL_FAILURE(expect_round_trip(device, b, b.view(), false, false, describe(b)));
  }
}

TEST_P(CipherStagedInputs, BatchesOverManyChunksMatchOpenSslForEveryCipherIvFormAndLayout) {
  OPKIT_DEVICE_OR_SKIP(device, "device buffers");
  batches_over_many_chunks(device);
}
TEST_P(CipherStagedInputs, ForgedMessagesOnBothSidesOfChunkBoundariesAreReportedByIndexAndZeroed) {
  OPKIT_DEVICE_OR_SKIP(device, "device buffers");
  forged_messages_at_chunk_boundaries(device);
}
TEST_P(CipherStagedInputs, QueuedCallsTakeTheirStreamedInputsAtOnceAndMatchOpenSsl) {
  OPKIT_DEVICE_OR_SKIP(device, "device buffers");
  queued_calls_take_their_inputs(device);
}
TEST_P(CipherStagedInputs, HostInputsStreamBesideDeviceInputs) {
  OPKIT_DEVICE_OR_SKIP(device, "device memory for keys");
  host_inputs_beside_device_inputs(device);
}
TEST_P(CipherStagedInputs, ForgedGcmMessagesOnBothSidesOfASliceBoundaryAreReportedByIndexAndZeroed) {
  OPKIT_DEVICE_OR_SKIP(device, "device buffers");
  forged_gcm_messages_in_two_slices(device);
}
// AES batches in slices of 1 to 5 messages, which alternate between the call's stream and a side
// stream that joins it at the end (aes_device.cpp, for_each_slice): the round trips, the forged
// messages, the calls queued back to back and the device inputs written on the call's stream
// above, with every slice's keys streamed in chunks of their own. On cpu-deferred a slice that ran before its inputs
// arrived, or a call whose side stream its caller's stream did not wait for, shows.
TEST_P(CipherStagedInputs, AesBatchesInSlicesOnTwoStreamsMatchOpenSsl) {
  OPKIT_DEVICE_OR_SKIP(device, "device buffers");
  const SmallAesSlices slices(1 + random_below(5));
  ASSERT_NO_FATAL_FAILURE(batches_over_many_chunks(device));
  ASSERT_NO_FATAL_FAILURE(forged_messages_at_chunk_boundaries(device));
  ASSERT_NO_FATAL_FAILURE(queued_calls_take_their_inputs(device));
  host_inputs_beside_device_inputs(device);
}
TEST_P(CipherStagedInputs, BatchesOverTheDefaultChunkMatchOpenSsl) {
  OPKIT_DEVICE_OR_SKIP(device, "device buffers");
  batches_over_the_default_chunk(device);
}

}  // namespace
