// Symmetric ciphers: AES-CTR, AES-GCM, ChaCha20 and ChaCha20-Poly1305, byte-exact with OpenSSL's
// EVP ciphers of the same names, on the host CPU (OpenSSL, all cores) or on a device (the
// runtime-compiled kernels in src/ops/cipher/kernels; on the CPU backend that kernel source runs
// on the host, which is how machines without a GPU test it).
//
// Two shapes:
//   bulk  — one message of any length; in and out the same size, exactly in place or disjoint;
//   batch — N independent messages (fixed length, or data + offsets), each with its own key, IV,
//           AAD and tag.
// Decryption with an AEAD verifies the tag; on a mismatch it throws AuthenticationError and the
// output is zeroed (every byte of it; in batch mode the failing messages' bytes), so no
// unauthenticated plaintext is released. Keys never appear in errors; host copies of key material
// are wiped (OPENSSL_cleanse) before the call returns, and device copies are zeroed by work queued
// on the call's stream right behind the kernels that read them (before the call returns when no
// stream is given), their memory reused by nothing before that.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/program.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops {

enum class Cipher : std::uint8_t {
  aes_128_ctr,
  aes_192_ctr,
  aes_256_ctr,
  aes_128_gcm,
  aes_192_gcm,
  aes_256_gcm,
  chacha20,
  chacha20_poly1305,
};

struct CipherTraits {
  std::string_view name;    // OpenSSL's name: "aes-128-ctr", "chacha20-poly1305", ...
  std::size_t key_bytes;    // 16, 24 or 32
  std::size_t block_bytes;  // keystream block: 16 (AES) or 64 (ChaCha20)
  bool aead;                // GCM and ChaCha20-Poly1305 take AAD and produce a tag
};
const CipherTraits& cipher_traits(Cipher cipher) noexcept;
// Parses OpenSSL's name (case-insensitive); nullopt for an unknown one.
std::optional<Cipher> cipher_from_name(std::string_view name) noexcept;
std::span<const Cipher> all_ciphers() noexcept;

// The IV that continues the keystream of a CTR cipher or chacha20 (16-byte IV form) at keystream
// block `block` (16-byte blocks for AES, 64-byte for ChaCha20): how a long stream is cut into
// pieces that are encrypted independently. CTR's counter wraps modulo 2^128 as OpenSSL's does;
// chacha20's 32-bit counter is not checked here (the encrypt calls check it).
std::array<std::uint8_t, 16> keystream_iv_at(Cipher cipher, std::span<const std::uint8_t, 16> iv, std::uint64_t block);

// AEAD tags are 16 bytes; GCM also allows the truncations SP 800-38D permits (12..16, 8, 4).
inline constexpr std::size_t aead_tag_bytes = 16;

// The IV of each cipher:
//   aes-*-ctr          16 bytes, the initial 128-bit big-endian counter block (as OpenSSL's -iv);
//   aes-*-gcm          the nonce, 1 byte or more (12 is the fast and recommended length);
//   chacha20           16 bytes, OpenSSL's form: 32-bit little-endian block counter || 96-bit nonce;
//                      or 12 bytes, RFC 8439's nonce, with CipherOptions::chacha20_counter;
//   chacha20-poly1305  12 bytes (RFC 8439 nonce).
struct CipherKey {
  std::span<const std::uint8_t> key;
  std::span<const std::uint8_t> iv;
  std::span<const std::uint8_t> aad = {};  // AEADs only; host memory
};

struct CipherOptions {
  // Where the work runs. Unset: host data on the host CPU through OpenSSL EVP (all cores), device
  // buffers on their own device. A device: its kernels (a GPU, or the CPU backend running the
  // kernel source); host data is copied there and back. Device buffers must live on that device.
  std::optional<Device> device = std::nullopt;
  // Device buffers: the work is queued on this stream. Given one, AES-CTR and ChaCha20 return
  // with their work queued, making no wait for the GPU (order later work on the same stream, or
  // wait for it, before reading the output); the AEADs wait for their tags or verdicts. Unset:
  // the device's default stream, and every call returns with its work done.
  const Stream* stream = nullptr;
  // RFC 8439 block counter of the first keystream block for chacha20 with a 12-byte nonce (the
  // RFC's encryption examples use 1). Ignored for a 16-byte IV, which carries its own counter.
  std::uint32_t chacha20_counter = 0;
  // Host CPU path: worker threads (0: all cores).
  unsigned threads = 0;
};

// A wrong tag. For batches, failed_indices() lists every message whose tag did not verify.
class AuthenticationError : public Error {
 public:
  explicit AuthenticationError(std::vector<std::size_t> failed_indices);
  const std::vector<std::size_t>& failed_indices() const noexcept { return failed_; }

 private:
  std::vector<std::size_t> failed_;
};

// ---- Bulk: one message. out.size() == in.size(); out is in or does not overlap it. ----
// tag: the AEAD tag (encrypt writes it, decrypt verifies it; its size is the tag length); empty
// for CTR and ChaCha20.

void encrypt(Cipher cipher, const CipherKey& key, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
             std::span<std::uint8_t> tag = {}, const CipherOptions& options = {});
void decrypt(Cipher cipher, const CipherKey& key, std::span<const std::uint8_t> in, std::span<std::uint8_t> out,
             std::span<const std::uint8_t> tag = {}, const CipherOptions& options = {});
// Device buffers (key, IV, AAD and tag stay in host memory).
void encrypt(Cipher cipher, const CipherKey& key, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
             std::span<std::uint8_t> tag = {}, const CipherOptions& options = {});
void decrypt(Cipher cipher, const CipherKey& key, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
             std::span<const std::uint8_t> tag = {}, const CipherOptions& options = {});
// Device buffers with the tag in device memory too (on the data's device): the call queues every
// step on options.stream and returns without waiting for the GPU (key, IV and an AAD of up to 256
// bytes reach it as kernel parameters, not host copies), so a CUDA graph capturing that stream
// captures the call whole (opkit.torch's AEAD encryption). Without a stream it waits, as above.
void encrypt(Cipher cipher, const CipherKey& key, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
             BufferView<std::uint8_t> tag, const CipherOptions& options = {});

// ---- Batch: count independent messages. ----
// Message i is data[offsets[i], offsets[i + 1]) when offsets is not empty (count + 1 offsets,
// non-decreasing), else data[i * message_bytes, (i + 1) * message_bytes). Key i is
// keys[i * key_bytes ..], IV i is ivs[i * iv_bytes ..] (one IV length for the batch), AAD i is
// aad[aad_offsets[i], aad_offsets[i + 1]) (no AAD when aad_offsets is empty), tag i is
// tags[i * tag_bytes ..] with tag_bytes = tags.size() / count.
//
// Keys, IVs and AAD are host memory, or device memory (device_keys, device_ivs, device_aad) for a
// batch whose data is on a device (the BufferView overloads): each of the three in exactly one of
// the two forms (the host span empty when the device view is set), the device views on the data's
// device and of the same sizes (count * key_bytes, count * iv_bytes, at least aad_offsets' last
// entry); anything else is an opkit::Error naming the field and the sizes, never key bytes.
// Offsets, aad_offsets and (unless the device-tag overload) tags stay host memory.
//
// Host keys, IVs and AAD of a batch of more than 2^16 messages stream to the device in chunks
// through pinned staging on a stream of the call's own, each chunk's upload overlapping the kernels
// of the chunks before it; such a call reads the caller's bytes and waits for its own uploads (not
// for its kernels, nor for work queued earlier on its stream) before it returns, and wipes the
// staging copies then (docs/ciphers.md, "Batches with keys in host memory").
//
// Device keys, IVs and AAD are read in place by the call's kernels: no host copy, no staging and
// no wait, so a CTR or ChaCha20 batch (and an AEAD encryption into device tags) given a stream
// returns with its work queued. They are stream-ordered like the data: keep them unchanged until
// the work queued on the call's stream has run. They are the caller's and are not wiped; what the
// call derives from them on the device (AES key schedules, GCM hash keys) is, as for host keys.
// ChaCha20 with 16-byte IVs reads each IV's counter word to check the message's length against
// the 32-bit counter space; with device IVs a small kernel makes that check on the device and the
// call waits for its one-word verdict before any cipher work (12-byte nonces need no such check).
struct CipherBatch {
  std::size_t count = 0;
  std::size_t message_bytes = 0;
  std::span<const std::uint64_t> offsets = {};
  std::span<const std::uint8_t> keys = {};
  std::span<const std::uint8_t> ivs = {};
  std::size_t iv_bytes = 12;
  std::span<const std::uint8_t> aad = {};
  std::span<const std::uint64_t> aad_offsets = {};
  std::optional<BufferView<const std::uint8_t>> device_keys = std::nullopt;  // instead of keys
  std::optional<BufferView<const std::uint8_t>> device_ivs = std::nullopt;   // instead of ivs
  std::optional<BufferView<const std::uint8_t>> device_aad = std::nullopt;   // instead of aad
};

// out has the layout of in (same size; in place or disjoint).
void encrypt_batch(Cipher cipher, const CipherBatch& batch, std::span<const std::uint8_t> in,
                   std::span<std::uint8_t> out, std::span<std::uint8_t> tags = {}, const CipherOptions& options = {});
void decrypt_batch(Cipher cipher, const CipherBatch& batch, std::span<const std::uint8_t> in,
                   std::span<std::uint8_t> out, std::span<const std::uint8_t> tags = {},
                   const CipherOptions& options = {});
void encrypt_batch(Cipher cipher, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                   BufferView<std::uint8_t> out, std::span<std::uint8_t> tags = {}, const CipherOptions& options = {});
void decrypt_batch(Cipher cipher, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                   BufferView<std::uint8_t> out, std::span<const std::uint8_t> tags = {},
                   const CipherOptions& options = {});
// AEAD batch encryption with the tags in device memory (on the data's device): nothing comes back
// to the host, so given a stream the call returns with its work queued (host keys, IVs and AAD
// are staged as for a CTR batch on a stream). ChaCha20-Poly1305 tags are 16 bytes each; GCM's
// tags.size() / count bytes (a GCM tag length).
void encrypt_batch(Cipher cipher, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                   BufferView<std::uint8_t> out, BufferView<std::uint8_t> tags, const CipherOptions& options = {});
// AEAD batch decryption with the expected tags in device memory (on the data's device; the same
// sizes as above), read in place on options.stream like the data: nothing is copied to or from
// the host but the verdict. Tags are compared on the device; the call waits for the kernels and
// brings back how many messages failed (ChaCha20-Poly1305: one 8-byte count; GCM: a verdict byte
// per message), and the failing messages' verdicts only when some failed. A failing message's
// output is zero when the call throws AuthenticationError (ChaCha20-Poly1305 decrypts while it
// authenticates and its kernel zeroes what it wrote; GCM decrypts only authentic messages and the
// call zeroes the others); the other messages are decrypted.
void decrypt_batch(Cipher cipher, const CipherBatch& batch, BufferView<const std::uint8_t> in,
                   BufferView<std::uint8_t> out, BufferView<const std::uint8_t> tags,
                   const CipherOptions& options = {});

// Where the cipher kernels (every cipher, bulk and batch) run: every backend that compiles CUDA C++
// (cuda, cpu, ...). A device of another backend is refused with an Error naming it.
const KernelSupport& cipher_support();

// The ChaCha20 kernel programs as the device path compiles them (for NVRTC tests, SASS dumps).
// aligned: in and out (and every batch message) are 16-byte aligned (vector loads and stores);
// decrypt: the AEAD kernels authenticate the input rather than the output.
Program chacha20_bulk_program(bool aligned, bool decrypt);
Program chacha20_batch_program(bool aead, bool aligned, bool decrypt);

}  // namespace opkit::ops
