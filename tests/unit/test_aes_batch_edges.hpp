// Batch AES-CTR and GCM at the edges of the batch kernels' IO, both of them (aes_ctr_batch, which
// stages a warp's bytes through shared memory, and aes_ctr's direct path): message lengths around
// the 16-byte chunk and the 512-byte unit, messages starting at every alignment, in and out in the
// same phase or not, in place, batches whose units span several thread blocks, and GCM opens with
// failing tags, each message against OpenSSL. Used by the CPU-backend unit tests and the GPU tests.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ops/cipher/aes_batch_io.hpp"
#include "unit/test_aes_reference.hpp"

namespace opkit::test::aes {

// Runs the batch calls with one IO for its lifetime.
class BatchIoScope {
 public:
  explicit BatchIoScope(ops::aes::BatchIo io) : saved_(ops::aes::batch_io()) { ops::aes::set_batch_io(io); }
  ~BatchIoScope() { ops::aes::set_batch_io(saved_); }
  BatchIoScope(const BatchIoScope&) = delete;
  BatchIoScope& operator=(const BatchIoScope&) = delete;

 private:
  ops::aes::BatchIo saved_;
};

inline std::string io_name(ops::aes::BatchIo io) {
  return io == ops::aes::BatchIo::staged ? "staged IO" : "direct IO";
}

// Lengths around a chunk (16 bytes) and a unit (512 bytes), and a packet.
inline const std::vector<std::size_t>& edge_lengths() {
  static const std::vector<std::size_t> lengths = {0, 1, 15, 16, 17, 511, 512, 513, 1500};
  return lengths;
}

// Where a batch's data lies: in at in_shift bytes into its allocation, out at out_shift into its
// own (a different phase when the shifts differ modulo 16), or out == in.
struct Placement {
  std::size_t in_shift = 0, out_shift = 0;
  bool in_place = false;
  std::string name() const {
    return in_place ? "in place at +" + std::to_string(in_shift)
                    : "in at +" + std::to_string(in_shift) + ", out at +" + std::to_string(out_shift);
  }
};

inline const std::vector<Placement>& edge_placements() {
  static const std::vector<Placement> placements = {{0, 0, false}, {7, 7, true}, {5, 12, false}};
  return placements;
}

// A batch's messages: fixed_bytes each (offsets empty), or as offsets say.
struct EdgeBatch {
  std::size_t count = 0, fixed_bytes = 0;
  std::vector<std::uint64_t> offsets;
  Bytes data;
  std::uint64_t begin(std::size_t i) const { return offsets.empty() ? i * fixed_bytes : offsets[i]; }
  std::uint64_t end(std::size_t i) const { return offsets.empty() ? (i + 1) * fixed_bytes : offsets[i + 1]; }
  Bytes message(const Bytes& bytes, std::size_t i) const {
    return Bytes(bytes.begin() + static_cast<std::ptrdiff_t>(begin(i)),
                 bytes.begin() + static_cast<std::ptrdiff_t>(end(i)));
  }
};

inline EdgeBatch fixed_edge_batch(std::mt19937_64& rng, std::size_t count, std::size_t length) {
  EdgeBatch b{count, length, {}, {}};
  b.data = random_bytes(rng, count * length);
  return b;
}

// Every edge length `repeats` times in a random order, with offsets.
inline EdgeBatch variable_edge_batch(std::mt19937_64& rng, std::size_t repeats) {
  std::vector<std::size_t> lengths;
  for (std::size_t r = 0; r < repeats; ++r) lengths.insert(lengths.end(), edge_lengths().begin(), edge_lengths().end());
  std::shuffle(lengths.begin(), lengths.end(), rng);
  EdgeBatch b{lengths.size(), 0, {0}, {}};
  for (std::size_t n : lengths) b.offsets.push_back(b.offsets.back() + n);
  b.data = random_bytes(rng, b.offsets.back());
  return b;
}

// The device buffers of one call: in and out placed as `at` says, the offsets uploaded.
struct EdgeBuffers {
  DeviceBuffer<std::uint8_t> in_buffer, out_buffer;
  DeviceBuffer<std::uint64_t> offset_buffer;
  BufferView<std::uint8_t> in, out;
  ops::aes::BatchLayout layout;

  EdgeBuffers(const Device& device, const EdgeBatch& b, const Bytes& in_bytes, const Placement& at,
              std::uint8_t out_fill = 0xee)
      : in_buffer(device.alloc<std::uint8_t>(in_bytes.size() + at.in_shift + 1)),
        out_buffer(device.alloc<std::uint8_t>(in_bytes.size() + at.out_shift + 1)),
        offset_buffer(device.alloc<std::uint64_t>(std::max<std::size_t>(b.offsets.size(), 1))),
        in(in_buffer.view().subview(at.in_shift, in_bytes.size())),
        out(at.in_place ? in : out_buffer.view().subview(at.out_shift, in_bytes.size())),
        layout{b.count, b.fixed_bytes, std::nullopt} {
    if (!in_bytes.empty()) in.copy_from(std::span<const std::uint8_t>(in_bytes));
    if (!at.in_place) out_buffer.fill(out_fill);
    if (!b.offsets.empty()) {
      offset_buffer.copy_from(std::span<const std::uint64_t>(b.offsets));
      layout.offsets = BufferView<const std::uint64_t>(offset_buffer.view());
      layout.host_offsets = b.offsets;
    }
  }
  Bytes result() const { return in.size() == 0 ? Bytes{} : out.to_host(); }
};

// Batch CTR of b placed as `at`, every message against OpenSSL.
inline void check_ctr_edge_batch(const Device& device, std::mt19937_64& rng, const EdgeBatch& b, const Placement& at,
                                 const std::string& what) {
  const std::size_t key_bytes = std::size_t{16} + 8 * (rng() % 3);
  const Bytes keys = random_bytes(rng, b.count * key_bytes), ctrs = random_bytes(rng, b.count * 16);
  auto d_keys = upload(device, keys), d_ctrs = upload(device, ctrs);
  EdgeBuffers buffers(device, b, b.data, at);
  ops::aes::aes_ctr_xor_batch(device, key_bytes, d_keys, d_ctrs, buffers.layout, buffers.in, buffers.out);
  const Bytes out = buffers.result();
  for (std::size_t i = 0; i < b.count; ++i) {
    const Bytes key(keys.begin() + static_cast<std::ptrdiff_t>(i * key_bytes),
                    keys.begin() + static_cast<std::ptrdiff_t>((i + 1) * key_bytes));
    const Bytes ctr(ctrs.begin() + static_cast<std::ptrdiff_t>(16 * i),
                    ctrs.begin() + static_cast<std::ptrdiff_t>(16 * (i + 1)));
    ASSERT_EQ(b.message(out, i), openssl_ctr(key, ctr, b.message(b.data, i)))
        << what << ", " << at.name() << ": CTR message " << i << " of " << b.count << " (" << b.end(i) - b.begin(i)
        << " bytes at " << b.begin(i) << ")";
  }
}

// Batch GCM of b: sealed, then opened placed as `at` with about a fifth of the tags or ciphertexts
// tampered with; the failing messages are reported and not written (out keeps its 0xee, or in
// place the ciphertext), the others open to the plaintext.
inline void check_gcm_edge_batch(const Device& device, std::mt19937_64& rng, const EdgeBatch& b, const Placement& at,
                                 const std::string& what) {
  const std::size_t key_bytes = 16, iv_bytes = 12;
  const Bytes keys = random_bytes(rng, b.count * key_bytes), ivs = random_bytes(rng, b.count * iv_bytes);
  auto d_keys = upload(device, keys), d_ivs = upload(device, ivs);
  auto no_aad = device.alloc<std::uint8_t>(1);
  const ops::aes::BatchLayout aad_layout{b.count, 0, std::nullopt};
  auto slice = [](const Bytes& bytes, std::size_t at_byte, std::size_t n) {
    return Bytes(bytes.begin() + static_cast<std::ptrdiff_t>(at_byte),
                 bytes.begin() + static_cast<std::ptrdiff_t>(at_byte + n));
  };
  // Seal (out of place, aligned), against OpenSSL.
  EdgeBuffers sealing(device, b, b.data, Placement{});
  auto d_tags = device.alloc<std::uint8_t>(b.count * 16);
  ops::aes::aes_gcm_seal_batch(device, key_bytes, d_keys, iv_bytes, d_ivs, no_aad.view().subview(0, 0), aad_layout,
                               sealing.layout, sealing.in, sealing.out, 16, d_tags);
  Bytes sealed = sealing.result(), tags = download(d_tags);
  for (std::size_t i = 0; i < b.count; ++i) {
    const Bytes want = openssl_gcm_seal(slice(keys, i * key_bytes, key_bytes), slice(ivs, i * iv_bytes, iv_bytes), {},
                                        b.message(b.data, i));
    ASSERT_EQ(b.message(sealed, i), Bytes(want.begin(), want.end() - 16)) << what << ": GCM message " << i;
    ASSERT_EQ(slice(tags, 16 * i, 16), Bytes(want.end() - 16, want.end())) << what << ": GCM tag " << i;
  }
  // Tamper with a tag or a ciphertext byte of about a fifth of the messages (and the last).
  std::vector<std::size_t> forged;
  Bytes opened_in = sealed;
  for (std::size_t i = 0; i < b.count; ++i) {
    if (rng() % 5 != 0 && i + 1 != b.count) continue;
    const std::size_t n = b.end(i) - b.begin(i);
    if (n > 0 && rng() % 2 == 0)
      opened_in[b.begin(i) + rng() % n] ^= 0x20;
    else
      tags[16 * i + rng() % 16] ^= 0x04;
    forged.push_back(i);
  }
  EdgeBuffers opening(device, b, opened_in, at);
  auto d_bad_tags = upload(device, tags);
  const auto failed =
      ops::aes::aes_gcm_open_batch(device, key_bytes, d_keys, iv_bytes, d_ivs, no_aad.view().subview(0, 0), aad_layout,
                                   opening.layout, opening.in, opening.out, 16, d_bad_tags);
  EXPECT_EQ(failed, forged) << what << ", " << at.name();
  const Bytes opened = opening.result();
  for (std::size_t i = 0; i < b.count; ++i) {
    const bool bad = std::find(forged.begin(), forged.end(), i) != forged.end();
    const std::size_t n = b.end(i) - b.begin(i);
    const Bytes want = !bad ? b.message(b.data, i) : at.in_place ? b.message(opened_in, i) : Bytes(n, 0xee);
    ASSERT_EQ(b.message(opened, i), want)
        << what << ", " << at.name() << ": opened message " << i << (bad ? " (forged: must not be written)" : "");
  }
}

// Every edge length as a fixed-length batch of `count` messages (units over several thread blocks
// of 128 for every length), and all of them mixed with offsets, at every placement, CTR through
// both IOs; GCM with failing tags at every placement through both IOs.
inline void check_batch_edges(const Device& device, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (ops::aes::BatchIo io : {ops::aes::BatchIo::staged, ops::aes::BatchIo::direct}) {
    const BatchIoScope scope(io);
    for (const Placement& at : edge_placements()) {
      for (std::size_t length : edge_lengths())
        check_ctr_edge_batch(device, rng, fixed_edge_batch(rng, count, length), at,
                             io_name(io) + ", " + std::to_string(count) + " x " + std::to_string(length));
      check_ctr_edge_batch(device, rng, variable_edge_batch(rng, count / 8 + 1), at, io_name(io) + ", edge lengths");
      check_gcm_edge_batch(device, rng, fixed_edge_batch(rng, count, 1500), at,
                           io_name(io) + ", GCM " + std::to_string(count) + " x 1500");
      check_gcm_edge_batch(device, rng, variable_edge_batch(rng, count / 8 + 1), at,
                           io_name(io) + ", GCM edge lengths");
    }
  }
}

}  // namespace opkit::test::aes
