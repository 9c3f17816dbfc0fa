// Launchers of the ChaCha20 / ChaCha20-Poly1305 kernels (see chacha20_device.hpp and the kernel
// sources for the work split).
#include "chacha20_device.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "batch_inputs.hpp"
#include "batch_verdicts.hpp"
#include "cipher_kernels.hpp"
#include "device_secret.hpp"
#include "pinned_ring.hpp"

namespace opkit::ops {
namespace {

Program kernel_program(const std::string& file) {
  return Program(detail::cipher_source(file))
      .name(file)
      .header("chacha20.cuh", detail::cipher_source("chacha20.cuh"))
      .header("poly1305.cuh", detail::cipher_source("poly1305.cuh"))
      .header("cipher_io.cuh", detail::cipher_source("cipher_io.cuh"));
}

}  // namespace

Program chacha20_bulk_program(bool aligned, bool decrypt) {
  Program program = kernel_program("chacha20_bulk.cu");
  program.define("ALIGNED", aligned ? 1 : 0).define("DECRYPT", decrypt ? 1 : 0);
  return program;
}

Program chacha20_batch_program(bool aead, bool aligned, bool decrypt) {
  Program program = kernel_program("chacha20_batch.cu");
  program.define("AEAD", aead ? 1 : 0).define("ALIGNED", aligned ? 1 : 0).define("DECRYPT", decrypt ? 1 : 0);
  return program;
}

namespace detail {
namespace {

constexpr unsigned block_threads = 256;   // BLOCK of the kernels (their default)
constexpr std::size_t piece_bytes = 256;  // PIECE_BYTES of chacha20_bulk.cu
constexpr std::size_t poly1305_elem_bytes = 20;
constexpr std::size_t poly1305_multiplier_bytes = 40;
// poly1305_key of chacha20_bulk.cu: 40 powers r^(2^e), 16 multipliers r^16 .. r^1, s.
constexpr std::size_t poly1305_key_bytes = 40 * poly1305_elem_bytes + 16 * poly1305_multiplier_bytes + 16;

// chacha20_params of chacha20.cuh, as the host fills it.
struct Params {
  std::uint32_t key[8];
  std::uint32_t counter;
  std::uint32_t nonce[3];
};
static_assert(sizeof(Params) == 48);

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
}

Params params_for(const std::uint8_t* key, const Iv16& iv) {
  Params p{};
  for (int i = 0; i < 8; ++i) p.key[i] = le32(key + 4 * i);
  p.counter = le32(iv.data());
  for (int i = 0; i < 3; ++i) p.nonce[i] = le32(iv.data() + 4 + 4 * i);
  return p;
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

std::uint32_t blocks_for(std::uint64_t threads) {
  return static_cast<std::uint32_t>((threads + block_threads - 1) / block_threads);
}

std::uint64_t next_pow2(std::uint64_t x) {
  std::uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// A message's chacha20_mac_key entry in chacha20_batch.cu's shared memory at G = 2^lanes_log2
// threads per message: CHACHA20_MAC_KEY_ELEMS(lanes_log2) Poly1305 elements.
std::size_t batch_mac_key_bytes(unsigned lanes_log2) {
  return (6 + lanes_log2) * poly1305_elem_bytes;
}

// log2 of G, the threads on one message in chacha20_batch.cu, for messages of `mean_bytes`: the
// largest G up to 8 that keeps its lanes at least 7/8 busy (a message of B 64-byte blocks takes
// G * ceil(B / G) lane-blocks; 1500 bytes: 24 blocks, G = 8, three rounds). G >= 2 already puts
// two lanes in every 128-byte line a warp's 16-byte access touches; more lanes shorten each
// lane's walk but add per-lane work (key loads, the counter-free quarter rounds, and for the AEAD
// log2 G steps that combine the lanes' Poly1305 sums).
unsigned batch_lanes_log2(std::uint64_t mean_bytes) {
  const std::uint64_t blocks = (mean_bytes + 63) / 64;
  for (unsigned log2 = 3; log2 > 0; --log2) {
    const std::uint64_t lanes = std::uint64_t{1} << log2;
    if (lanes <= blocks && 8 * blocks >= 7 * lanes * ((blocks + lanes - 1) / lanes)) return log2;
  }
  return 0;
}

}  // namespace

void chacha20_device_bulk(const Device& device, bool aead, bool decrypt, Bytes key, const Iv16& iv, Bytes aad,
                          const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, TagOut tag,
                          const Stream* stream, const KernelVariant& variant) {
  Params params = params_for(key.data(), iv);
  DeviceSecret secret(device, sizeof(Params) + poly1305_key_bytes, stream);
  secret.upload(std::span(reinterpret_cast<const std::uint8_t*>(&params), sizeof params));
  OPENSSL_cleanse(&params, sizeof params);  // upload has taken a copy of its own
  const CipherProgram program{.source = CipherProgram::Source::chacha20_bulk,
                              .aligned = aligned16(in) && aligned16(out),
                              .decrypt = aead && decrypt};
  auto kernel = [&](const char* name) { return variant ? variant(name) : cipher_kernel(device, program, name); };
  const std::uint8_t* params_ptr = secret.data();
  if (!aead) {
    // Whole blocks in the main kernel (two per thread, 32 threads per 64 blocks), the last partial
    // block (if any) in a one-thread kernel.
    const std::uint64_t blocks = bytes / 64;
    if (blocks != 0)
      kernel("chacha20_xor")
          .launch({.grid = blocks_for((blocks + 63) / 64 * 32), .block = block_threads, .stream = stream}, in, out,
                  static_cast<unsigned long long>(blocks), params_ptr);
    if (bytes % 64 != 0)
      kernel("chacha20_xor_tail")
          .launch({.grid = 1, .block = 1, .stream = stream}, in, out, static_cast<unsigned long long>(bytes),
                  params_ptr);
    finish_call(device, stream);
    return;
  }
  std::uint8_t* poly_key = secret.data() + sizeof(Params);
  kernel("chacha20_poly1305_setup").launch({.grid = 1, .block = 1, .stream = stream}, params_ptr, poly_key);

  const std::uint64_t pieces = (bytes + piece_bytes - 1) / piece_bytes;
  const std::uint64_t full = pieces == 0 ? 0 : pieces - 1;  // the last piece goes to the finish kernel
  const std::uint64_t groups = blocks_for(full);
  DeviceSecret partials(device, std::max<std::uint64_t>(groups, 1) * poly1305_elem_bytes, stream);
  if (groups != 0) {
    const std::uint64_t pad = groups * block_threads - full;
    kernel("chacha20_poly1305_main")
        .launch({.grid = static_cast<std::uint32_t>(groups), .block = block_threads, .stream = stream}, in, out,
                static_cast<unsigned long long>(full), static_cast<unsigned long long>(pad), params_ptr,
                static_cast<const std::uint8_t*>(poly_key), partials.data());
  }
  // The AAD as DeviceSecret uploads it: up to 256 bytes as a kernel parameter (capturable).
  DeviceSecret aad_device(device, aad.size(), stream);
  aad_device.upload(aad);
  std::optional<DeviceBuffer<std::uint8_t>> tag_scratch;
  if (!tag.on_device) tag_scratch.emplace(call_scratch<std::uint8_t>(device, aead_tag_bytes, stream));
  std::uint8_t* tag_device = tag.on_device ? tag.bytes.data() : tag_scratch->data();
  const std::uint64_t per_thread = next_pow2((groups + block_threads - 1) / block_threads);
  kernel("chacha20_poly1305_finish")
      .launch({.grid = 1, .block = block_threads, .stream = stream}, in, out, static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(full * piece_bytes), params_ptr,
              static_cast<const std::uint8_t*>(poly_key), static_cast<const std::uint8_t*>(partials.data()),
              static_cast<unsigned long long>(groups), static_cast<unsigned long long>(per_thread),
              static_cast<const std::uint8_t*>(aad_device.data()), static_cast<unsigned long long>(aad.size()),
              tag_device);
  if (tag.on_device) return finish_call(device, stream);
  tag_scratch->view().copy_to(tag.bytes.first(aead_tag_bytes), stream);
  synchronize(device, stream);
}

std::vector<std::size_t> chacha20_device_batch(const Device& device, bool aead, bool decrypt, const CipherBatch& batch,
                                               const BatchBounds& bounds, const CheckedBatch& checked,
                                               const std::uint8_t* in, std::uint8_t* out, TagOut tags_out,
                                               TagIn tags_expected, const Stream* stream) {
  if (batch.count == 0) return {};
  const bool verify = aead && decrypt;
  const bool fixed = bounds.fixed();
  bool aligned = aligned16(in) && aligned16(out);
  if (fixed) {
    aligned = aligned && bounds.fixed_bytes() % 16 == 0;
  } else {
    for (std::size_t i = 0; aligned && i < batch.count; ++i) aligned = bounds.begin(i) % 16 == 0;
  }

  // The keys, IVs and AAD as the caller laid them out (batch_inputs.hpp): device memory read in
  // place (the kernel loads key and IV words: 4-byte aligned), host memory copied into one secret
  // buffer; the kernel reads each message's key words, counter and nonce from them (no
  // per-message table on the host). A large batch streams host inputs in chunks of messages, one
  // launch a chunk, each chunk's upload overlapping the launches before it. Otherwise a call that
  // waits (for host tags, for a decryption's verdicts, or without a stream) copies host bytes
  // directly, and one that returns with its work queued stages them.
  const bool call_waits = stream == nullptr || verify || (aead && !tags_out.on_device);
  // A decryption's host tags are staged as the keys are (in chunks through pinned memory for a
  // large batch).
  const std::span<const std::uint8_t> host_tags =
      verify && !tags_expected.on_device ? tags_expected.bytes : std::span<const std::uint8_t>{};
  BatchInputs inputs(device, batch,
                     {.word_bytes = 4, .aad = aead, .expected_tags = host_tags, .call_waits = call_waits}, stream);

  // `offsets` is this call's own copy.
  const DeviceBuffer<std::uint64_t> offsets_device = upload_scratch(device, bounds.offsets(), stream);
  // The kernel's `tags`: encryption writes them (host tags_out: into scratch, copied back below),
  // decryption reads the expected ones (host tags_expected: staged with the keys).
  std::optional<DeviceBuffer<std::uint8_t>> tags_scratch;
  const std::uint8_t* tags_device = nullptr;
  if (verify && tags_expected.on_device) {
    tags_device = tags_expected.bytes.data();
  } else if (verify) {
    tags_device = inputs.expected_tags().data();
  } else if (aead && tags_out.on_device) {
    tags_device = tags_out.bytes.data();
  } else if (aead) {
    tags_scratch.emplace(call_scratch<std::uint8_t>(device, batch.count * aead_tag_bytes, stream));
  }
  if (tags_scratch) tags_device = tags_scratch->data();
  // Decryption: a verdict byte per message and the failure count, which the kernel only adds to.
  std::optional<BatchVerdicts> verdicts;
  if (verify) verdicts.emplace(device, batch.count, stream);

  const CipherProgram program{
      .source = CipherProgram::Source::chacha20_batch, .aead = aead, .aligned = aligned, .decrypt = verify};
  // G threads per message, block_threads / G messages per block (chacha20_batch.cu's layout).
  const unsigned lanes_log2 = batch_lanes_log2(bounds.total() / batch.count);
  const std::uint64_t per_block = block_threads >> lanes_log2;
  const auto shared_bytes = static_cast<std::uint32_t>(aead ? per_block * batch_mac_key_bytes(lanes_log2) : 0);
  const Kernel kernel = cipher_kernel(device, program, "chacha20_batch");
  const std::uint64_t* offsets = fixed ? nullptr : offsets_device.data();
  const std::uint64_t* aad_offsets = inputs.aad_offsets();
  const std::size_t iv_bytes = batch.iv_bytes;
  // Messages [first, first + n): fixed-length data and every per-message array from message
  // first; data with offsets from the offsets of message first (they are absolute), as is AAD.
  for (std::size_t first = 0; first < batch.count; first += inputs.chunk_messages()) {
    const std::size_t n = std::min(inputs.chunk_messages(), batch.count - first);
    inputs.require(first, n, call_stream(device, stream));
    const std::uint64_t shift = fixed ? first * bounds.fixed_bytes() : 0;
    kernel.launch({.grid = static_cast<std::uint32_t>((n + per_block - 1) / per_block),
                   .block = block_threads,
                   .shared_bytes = shared_bytes,
                   .stream = stream},
                  in + shift, out + shift, static_cast<unsigned long long>(n),
                  static_cast<unsigned long long>(bounds.fixed_bytes()), offsets ? offsets + first : nullptr,
                  inputs.keys().data() + first * 32, inputs.aad().data(), aad_offsets ? aad_offsets + first : nullptr,
                  tags_device ? tags_device + first * aead_tag_bytes : nullptr, inputs.ivs().data() + first * iv_bytes,
                  static_cast<std::uint32_t>(iv_bytes), checked.chacha20_counter, lanes_log2,
                  verdicts ? verdicts->verdicts() + first : nullptr, verdicts ? verdicts->failures() : nullptr);
  }
  inputs.finish_uploads();
  if (verify) return verdicts->failed(stream);
  if (!aead || tags_out.on_device) {
    finish_call(device, stream);
    return {};
  }
  download_through_pinned(tags_scratch->view(), tags_out.bytes.first(batch.count * aead_tag_bytes),
                          call_stream(device, stream));
  synchronize(device, stream);
  return {};
}

}  // namespace detail
}  // namespace opkit::ops
