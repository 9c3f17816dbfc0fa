// AES-CTR and AES-GCM on an opkit device (a CUDA GPU, or the CPU backend running the same kernel
// source): the internal entry points that the public cipher API (include/opkit/ops/cipher.hpp)
// dispatches to for device-resident data. Constant-time: bitsliced AES and table-free GHASH (see
// docs/ciphers-aes.md).
//
// Conventions shared by every function here:
// - Keys are 16, 24 or 32 bytes (AES-128/192/256). Bulk keys and IVs are host memory; batch keys,
//   IVs and tags are device memory on `device`. Keys never appear in error messages.
// - Data buffers live on `device`; `out` is either exactly `in` (in place) or disjoint from it;
//   any alignment is accepted (16-byte aligned buffers take the fast path).
// - Work is queued on `stream` (nullptr: the device's default stream). Functions returning a
//   verdict (the *_open forms) synchronize with that stream; the others return when queued.
// - Device and host key schedules are wiped before the function returns (device: by work queued
//   on the same stream after the cipher kernels).
// - Bad arguments throw opkit::Error(Errc::invalid_argument) naming the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::aes {

inline constexpr std::size_t block_bytes = 16;
inline constexpr std::size_t gcm_max_tag_bytes = 16;
// GCM encrypts at most 2^32 - 2 blocks under one IV (SP 800-38D 5.2.1.1).
inline constexpr std::uint64_t gcm_max_message_bytes = ((std::uint64_t{1} << 32) - 2) * 16;

// Whether `key_bytes` is an AES key size (16, 24, 32) and `tag_bytes` a GCM tag size
// (SP 800-38D 5.2.1.2: 16, 15, 14, 13, 12, and 8 or 4 for restricted uses).
bool valid_key_bytes(std::size_t key_bytes) noexcept;
bool valid_gcm_tag_bytes(std::size_t tag_bytes) noexcept;

// ---- Bulk: one message, split over the whole device --------------------------------------------

// CTR (SP 800-38A; OpenSSL's EVP aes-*-ctr): out = in XOR keystream, where keystream block j is
// AES_K(counter_block + j), the counter block a 128-bit big-endian integer incremented mod 2^128.
// Encryption and decryption are the same operation.
void aes_ctr_xor(const Device& device, std::span<const std::uint8_t> key,
                 std::span<const std::uint8_t, block_bytes> counter_block, BufferView<const std::uint8_t> in,
                 BufferView<std::uint8_t> out, const Stream* stream = nullptr);

// GCM authenticated encryption (SP 800-38D). `iv` is any length >= 1 byte (12 bytes is the fast,
// recommended form); `aad` may be empty; `tag` receives the first tag.size() bytes of the tag
// (a valid GCM tag size) in device memory. in.size() <= gcm_max_message_bytes.
void aes_gcm_seal(const Device& device, std::span<const std::uint8_t> key, std::span<const std::uint8_t> iv,
                  BufferView<const std::uint8_t> aad, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
                  BufferView<std::uint8_t> tag, const Stream* stream = nullptr);

// GCM authenticated decryption: checks `tag` (device memory, a valid tag size, compared in constant
// time on the device) over aad and the ciphertext `in`, and only if it matches decrypts into `out`.
// Returns false for a wrong tag; then `out` is not written (in place: it still holds the
// ciphertext), so no unauthenticated plaintext is ever released.
[[nodiscard]] bool aes_gcm_open(const Device& device, std::span<const std::uint8_t> key,
                                std::span<const std::uint8_t> iv, BufferView<const std::uint8_t> aad,
                                BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
                                BufferView<const std::uint8_t> tag, const Stream* stream = nullptr);

// ---- Batch: N independent messages, each with its own key, IV/counter, AAD and tag -------------

// Where message i of a batch lies in its data buffer: bytes [i * fixed_bytes, (i + 1) * fixed_bytes)
// when `offsets` is unset, else bytes [offsets[i], offsets[i + 1]) with `offsets` holding count + 1
// nondecreasing entries in device memory (validated on the host: they are copied back once).
struct BatchLayout {
  std::size_t count = 0;
  std::size_t fixed_bytes = 0;
  std::optional<BufferView<const std::uint64_t>> offsets = std::nullopt;
  // The same offsets in host memory, when the caller holds them (the public cipher API): read
  // instead of copying `offsets` back, which would wait for the stream.
  std::span<const std::uint64_t> host_offsets = {};
};

// Called before the kernels of each slice of a batch (messages [first, first + count)) read their
// keys, IVs and AAD: makes them ready on `on`, the stream the slice's kernels go to (the call's
// stream or a side stream that joins it). The public API's batch path streams host keys in chunks
// this way (batch_inputs.hpp), so that a slice's upload overlaps the kernels of the slices before
// it. Empty: they are ready.
using SliceInputs = std::function<void(std::size_t first, std::size_t count, const Stream& on)>;

// Batch CTR: keys holds count * key_bytes bytes (message i's key at i * key_bytes), counter_blocks
// count * 16 bytes; in and out share `layout` (in place allowed).
void aes_ctr_xor_batch(const Device& device, std::size_t key_bytes, BufferView<const std::uint8_t> keys,
                       BufferView<const std::uint8_t> counter_blocks, const BatchLayout& layout,
                       BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out, const Stream* stream = nullptr,
                       const SliceInputs& ready = {});

// Batch GCM seal: ivs holds count * iv_bytes bytes (iv_bytes >= 1, the same for all messages);
// message i's AAD is per `aad_layout` in `aad` (aad_layout.count == layout.count; fixed_bytes 0
// and no offsets for none); tags receives count * tag_bytes bytes.
void aes_gcm_seal_batch(const Device& device, std::size_t key_bytes, BufferView<const std::uint8_t> keys,
                        std::size_t iv_bytes, BufferView<const std::uint8_t> ivs, BufferView<const std::uint8_t> aad,
                        const BatchLayout& aad_layout, const BatchLayout& layout, BufferView<const std::uint8_t> in,
                        BufferView<std::uint8_t> out, std::size_t tag_bytes, BufferView<std::uint8_t> tags,
                        const Stream* stream = nullptr, const SliceInputs& ready = {});

// Batch GCM open: as aes_gcm_open for every message; returns the indices (ascending) of the
// messages whose tag did not match. Their `out` bytes are not written; the others are decrypted.
// One wait, for the verdicts of the whole batch (a byte a message), after its last slice.
[[nodiscard]] std::vector<std::size_t> aes_gcm_open_batch(
    const Device& device, std::size_t key_bytes, BufferView<const std::uint8_t> keys, std::size_t iv_bytes,
    BufferView<const std::uint8_t> ivs, BufferView<const std::uint8_t> aad, const BatchLayout& aad_layout,
    const BatchLayout& layout, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out, std::size_t tag_bytes,
    BufferView<const std::uint8_t> tags, const Stream* stream = nullptr, const SliceInputs& ready = {});

}  // namespace opkit::ops::aes
