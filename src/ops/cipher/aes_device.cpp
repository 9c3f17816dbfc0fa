// AES-CTR / AES-GCM on a device: argument checks, scratch state, and the kernel sequence
// setup -> CTR -> GHASH -> tag (seal) or setup -> GHASH -> tag check -> CTR (open). Key schedules
// are computed on the device (the host never expands a key) and wiped there by work queued behind
// the kernels (device_secret.hpp): CTR calls make no wait for the GPU.
#include "aes_device.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "aes_batch_io.hpp"
#include "aes_kernels.hpp"
#include "batch_verdicts.hpp"
#include "device_secret.hpp"
#include "kernels/aes_batch_layout.cuh"
#include "kernels/aes_ghash_mma_shape.cuh"
#include "kernels/aes_state.cuh"
#include "opkit/error.hpp"
#include "opkit/kernel.hpp"
#include "side_stream.hpp"

namespace opkit::ops::aes {
namespace {

constexpr const char* stage = "aes";
constexpr std::uint32_t threads_per_block = 128;
static_assert(threads_per_block == AES_BATCH_THREADS, "aes_ctr_batch sizes its shared memory for these blocks");
static_assert(threads_per_block == AES_SETUP_BATCH_THREADS, "aes_setup_batch stages this many states");
// Bulk GHASH: blocks per chunk, sized so that about 2^18 threads share a large message.
constexpr std::uint64_t min_ghash_chunk = 32;
constexpr std::uint64_t ghash_threads = std::uint64_t{1} << 18;
// Bulk GHASH on the tensor cores (kernels/aes_ghash_mma.cuh): a warp's chunk, and warps a block.
constexpr std::uint64_t mma_chunk_blocks = AES_MMA_CHUNK_BLOCKS;
constexpr std::uint32_t mma_warps_per_block = 16;
// Round-key masks of one message: 128 words for each of up to 15 round keys (AES_MASK_WORDS).
constexpr std::size_t mask_words = 128 * 15;

// AES_MODE_* of kernels/aes.cu; gcm_lanes: GCM with 12-byte IVs whose H and E_K(J0) aes_setup_blocks
// computes, 16 messages per thread.
enum class Mode : std::uint32_t { ctr = 0, gcm = 1, gcm_lanes = 2 };

[[noreturn]] void fail(const std::string& message) {
  throw Error(Errc::invalid_argument, stage, message);
}

void check_key(std::size_t key_bytes) {
  if (!valid_key_bytes(key_bytes)) fail("an AES key is 16, 24 or 32 bytes, got " + std::to_string(key_bytes));
}

void check_on(const Device& device, const Device& other, const char* what) {
  if (!(device == other)) fail(std::string(what) + " is not on the device the operation runs on");
}

// out must be exactly in (in place) or not overlap it at all.
void check_in_out(const Device& device, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out) {
  check_on(device, in.device(), "the input");
  check_on(device, out.device(), "the output");
  if (in.size() != out.size())
    fail("input of " + std::to_string(in.size()) + " bytes but output of " + std::to_string(out.size()));
  const auto a = reinterpret_cast<std::uintptr_t>(in.data()), b = reinterpret_cast<std::uintptr_t>(out.data());
  if (a != b && a < b + out.size() && b < a + in.size()) fail("input and output overlap without being in place");
}

std::uint32_t grid_for(std::uint64_t threads) {
  return static_cast<std::uint32_t>((threads + threads_per_block - 1) / threads_per_block);
}

// Scratch of one call, all of it key material (detail::DeviceSecret): the states (round keys,
// counters, GHASH keys) and the key / IV bytes. Bulk calls also hold the round keys as
// precomputed masks (aes_ctr_masked) and the powers of H of chunked GHASH. A batch reuses one
// Scratch for all its slices (one allocation and one wipe a call).
struct Scratch {
  detail::DeviceSecret state_bytes;
  detail::DeviceSecret secrets;
  detail::DeviceSecret mask_bytes;
  detail::DeviceSecret power_bytes;
  std::optional<detail::DeviceSecret> mma_matrix;  // bulk GHASH on the tensor cores (tensor_core_ghash)

  Scratch(const Device& device, std::size_t count, std::size_t secret_bytes, const Stream* stream, bool bulk = false)
      : state_bytes(device, count * sizeof(AesState), stream),
        secrets(device, secret_bytes, stream),
        mask_bytes(device, (bulk ? mask_words : 1) * sizeof(std::uint32_t), stream),
        power_bytes(device, (bulk ? AES_GHASH_POWERS : 1) * sizeof(AesGf128), stream) {}

  AesState* states() noexcept { return state_bytes.as<AesState>(); }
  std::uint32_t* masks() noexcept { return mask_bytes.as<std::uint32_t>(); }
  AesGf128* powers() noexcept { return power_bytes.as<AesGf128>(); }
};

std::uint64_t blocks_of(std::uint64_t bytes) {
  return (bytes + block_bytes - 1) / block_bytes;
}

// Bulk setup: one message, key (and IV / counter) copied next to each other into scratch.
void setup_bulk(const AesKernels& k, Scratch& scratch, std::span<const std::uint8_t> key,
                std::span<const std::uint8_t> iv, Mode mode, std::uint64_t ghash_chunk, const Stream* stream) {
  // Key and IV side by side in one upload: one secret_store launch a call (two before), or one
  // copy for a GCM IV too long for a kernel parameter.
  std::vector<std::uint8_t> key_iv(key.begin(), key.end());
  key_iv.insert(key_iv.end(), iv.begin(), iv.end());
  scratch.secrets.upload(key_iv);
  OPENSSL_cleanse(key_iv.data(), key_iv.size());
  const std::uint8_t* base = scratch.secrets.data();
  k.setup.launch({.grid = 1, .block = 1, .stream = stream}, scratch.states(), base,
                 static_cast<std::uint32_t>(key.size()), base + key.size(), static_cast<std::uint32_t>(iv.size()),
                 static_cast<std::uint32_t>(mode), 1ull, static_cast<unsigned long long>(ghash_chunk), scratch.masks(),
                 scratch.powers());
}

void ctr_bulk(const AesKernels& k, Scratch& scratch, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
              const std::uint8_t* verdict, const Stream* stream) {
  const std::uint64_t units = 32 * ((blocks_of(in.size()) + 1023) / 1024);
  k.ctr_masked.launch({.grid = grid_for(units), .block = threads_per_block, .stream = stream},
                      static_cast<const AesState*>(scratch.states()), in.data(), out.data(),
                      static_cast<const unsigned long long*>(nullptr), static_cast<unsigned long long>(in.size()), 1ull,
                      static_cast<unsigned long long>(units), static_cast<const unsigned long long*>(nullptr),
                      static_cast<unsigned long long>(units), 32u, verdict,
                      static_cast<const std::uint32_t*>(scratch.masks()));
}

// Chunks for bulk GHASH over AAD || data || lengths (n blocks): the chunk the tensor cores take
// (AES_MMA_CHUNK_BLOCKS) where they will take the data (16-byte aligned, a few chunks of it), else
// a power-of-two chunk size so that ~ghash_threads run.
std::uint64_t ghash_chunk_blocks(const AesKernels& k, std::uint64_t aad_bytes, BufferView<const std::uint8_t> data) {
  const std::uint64_t n = blocks_of(aad_bytes) + blocks_of(data.size()) + 1;
  const bool aligned = reinterpret_cast<std::uintptr_t>(data.data()) % block_bytes == 0;
  if (k.ghash_mma && aligned && data.size() / block_bytes >= 4 * mma_chunk_blocks) return mma_chunk_blocks;
  std::uint64_t chunk = min_ghash_chunk;
  while (chunk * ghash_threads < n) chunk *= 2;
  return chunk;
}

// What the tensor cores take of a bulk GHASH stream (aes_ghash's chunking: the n blocks at the end
// of chunks * chunk positions): the whole data blocks (none unless the chunk is theirs and the
// data is 16-byte aligned), in the chunks [first, end) that hold any of them. data_position is
// data block 0's position in the chunking (the padding and the AAD's blocks before it).
struct TensorCoreShare {
  std::uint64_t whole = 0, data_position = 0, first = 0, end = 0;
  bool any() const noexcept { return end > first; }
};

TensorCoreShare tensor_core_share(std::uint64_t aad_bytes, BufferView<const std::uint8_t> data, std::uint64_t chunk,
                                  std::uint64_t chunks) {
  const std::uint64_t whole = data.size() / block_bytes;
  if (chunk != mma_chunk_blocks || whole == 0 || reinterpret_cast<std::uintptr_t>(data.data()) % block_bytes != 0)
    return {};
  const std::uint64_t aad_blocks = blocks_of(aad_bytes);
  const std::uint64_t pad = chunks * chunk - (aad_blocks + blocks_of(data.size()) + 1);
  const std::uint64_t position = pad + aad_blocks;
  return {whole, position, position / chunk, (position + whole + chunk - 1) / chunk};
}

// GHASH of the whole data blocks on the tensor cores: the matrix of the powers of H from the
// state's H (into scratch, key material wiped with it), then a block of 512 threads an SM, each
// warp a chunk at a time.
void ghash_on_tensor_cores(const Device& device, const AesKernels& k, Scratch& scratch, const std::uint8_t* data,
                           const TensorCoreShare& share, std::uint64_t chunks, const Stream* stream) {
  constexpr std::size_t products_bytes = AES_MMA_PRODUCTS * sizeof(AesGf128);
  constexpr std::size_t fragments_bytes = AES_MMA_FRAGMENT_PAIRS * 2 * sizeof(std::uint32_t);
  constexpr std::size_t row_powers_bytes = AES_MMA_ROWS * sizeof(AesGf128);
  detail::DeviceSecret& matrix =
      scratch.mma_matrix.emplace(device, products_bytes + fragments_bytes + row_powers_bytes, stream);
  auto* products = matrix.as<AesGf128>();
  std::uint8_t* fragments = matrix.data() + products_bytes;
  auto* row_powers = reinterpret_cast<AesGf128*>(matrix.data() + products_bytes + fragments_bytes);
  k.ghash_mma_products->launch({.grid = grid_for(AES_MMA_PRODUCTS), .block = threads_per_block, .stream = stream},
                               static_cast<const AesState*>(scratch.states()), products, row_powers);
  k.ghash_mma_fragments->launch(
      {.grid = grid_for(AES_MMA_FRAGMENT_PAIRS), .block = threads_per_block, .stream = stream},
      static_cast<const AesGf128*>(products), static_cast<void*>(fragments));
  const std::uint64_t count = share.end - share.first;
  const auto sms = static_cast<std::uint64_t>(std::max(device.info().compute_units, 1));
  const std::uint64_t blocks = std::min<std::uint64_t>(sms, (count + mma_warps_per_block - 1) / mma_warps_per_block);
  k.ghash_mma->launch({.grid = static_cast<std::uint32_t>(blocks),
                       .block = 32 * mma_warps_per_block,
                       .shared_bytes = static_cast<std::uint32_t>(fragments_bytes),
                       .stream = stream},
                      scratch.states(), static_cast<const void*>(data), static_cast<unsigned long long>(share.whole),
                      static_cast<unsigned long long>(share.data_position),
                      static_cast<unsigned long long>(share.first), static_cast<unsigned long long>(count),
                      static_cast<unsigned long long>(chunks), static_cast<const void*>(fragments),
                      static_cast<const AesGf128*>(row_powers), static_cast<const AesGf128*>(scratch.powers()));
}

void ghash_bulk(const Device& device, const AesKernels& k, Scratch& scratch, BufferView<const std::uint8_t> aad,
                BufferView<const std::uint8_t> data, std::uint64_t chunk, const Stream* stream) {
  const std::uint64_t n = blocks_of(aad.size()) + blocks_of(data.size()) + 1;
  const std::uint64_t chunks = (n + chunk - 1) / chunk;
  const TensorCoreShare mma = k.ghash_mma ? tensor_core_share(aad.size(), data, chunk, chunks) : TensorCoreShare{};
  // The Horner kernel skips the stream blocks the tensor cores take: the data's whole blocks.
  std::uint64_t skip_begin = 0, skip_end = 0;
  if (mma.any()) {
    ghash_on_tensor_cores(device, k, scratch, data.data(), mma, chunks, stream);
    skip_begin = blocks_of(aad.size());
    skip_end = skip_begin + mma.whole;
  }
  const auto* none = static_cast<const unsigned long long*>(nullptr);
  k.ghash.launch({.grid = grid_for(chunks), .block = threads_per_block, .stream = stream}, scratch.states(), aad.data(),
                 none, static_cast<unsigned long long>(aad.size()), data.data(), none,
                 static_cast<unsigned long long>(data.size()), 1ull, static_cast<unsigned long long>(chunks),
                 static_cast<unsigned long long>(chunk), static_cast<const AesGf128*>(scratch.powers()),
                 static_cast<unsigned long long>(skip_begin), static_cast<unsigned long long>(skip_end));
}

void check_gcm(const Device& device, std::span<const std::uint8_t> key, std::span<const std::uint8_t> iv,
               BufferView<const std::uint8_t> aad, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
               std::size_t tag_bytes, const Device& tag_device) {
  check_key(key.size());
  if (iv.empty()) fail("a GCM IV is at least 1 byte (12 recommended), got 0");
  if (iv.size() > (std::size_t{1} << 30)) fail("a GCM IV of " + std::to_string(iv.size()) + " bytes is too long");
  if (!valid_gcm_tag_bytes(tag_bytes))
    fail("a GCM tag is 16, 15, 14, 13, 12, 8 or 4 bytes, got " + std::to_string(tag_bytes));
  check_on(device, aad.device(), "the AAD");
  check_on(device, tag_device, "the tag");
  check_in_out(device, in, out);
  if (in.size() > gcm_max_message_bytes)
    fail("GCM encrypts at most 2^32 - 2 blocks (68719476704 bytes) under one IV, got " + std::to_string(in.size()));
  if (aad.size() > (std::uint64_t{1} << 61) - 1) fail("AAD longer than 2^64 - 1 bits");
}

// Message i's [start, end) of a variable layout, on the host for the unit table and checks (copied
// back unless the layout has them in host memory; a fixed layout is checked by its size alone and
// needs no table).
std::vector<std::uint64_t> layout_bounds(const BatchLayout& layout, std::size_t data_bytes, const char* what,
                                         const Device& device, const Stream* stream) {
  if (!layout.offsets) {
    if (layout.count != 0 && layout.fixed_bytes > data_bytes / layout.count)
      fail(std::string(what) + ": " + std::to_string(layout.count) + " messages of " +
           std::to_string(layout.fixed_bytes) + " bytes do not fit in " + std::to_string(data_bytes) + " bytes");
    return {};
  }
  std::vector<std::uint64_t> bounds(layout.count + 1);
  check_on(device, layout.offsets->device(), what);
  if (layout.offsets->size() != layout.count + 1)
    fail(std::string(what) + ": " + std::to_string(layout.count) + " messages need " +
         std::to_string(layout.count + 1) + " offsets, got " + std::to_string(layout.offsets->size()));
  if (layout.host_offsets.size() == bounds.size()) {
    std::copy(layout.host_offsets.begin(), layout.host_offsets.end(), bounds.begin());
  } else {
    // On the call's stream, behind the upload that may have put them there.
    layout.offsets->copy_to(std::span<std::uint64_t>(bounds), stream);
    detail::synchronize(device, stream);
  }
  for (std::size_t i = 0; i < layout.count; ++i)
    if (bounds[i + 1] < bounds[i] || bounds[i + 1] > data_bytes)
      fail(std::string(what) + ": offsets of message " + std::to_string(i) +
           " run backwards or past the end of the buffer (" + std::to_string(data_bytes) + " bytes)");
  return bounds;
}

// Everything a batch call shares between CTR and GCM, per slice of messages.
struct BatchCall {
  AesKernels k;  // handles of the kernel set's kernels
  const Device& device;
  std::size_t key_bytes;
  BufferView<const std::uint8_t> keys;
  std::size_t iv_bytes;
  BufferView<const std::uint8_t> ivs;
  const BatchLayout& layout;
  std::vector<std::uint64_t> bounds;  // variable layouts only
  BufferView<const std::uint8_t> in;
  BufferView<std::uint8_t> out;
  const Stream* stream;

  const unsigned long long* offsets(std::size_t first) const {
    return layout.offsets ? reinterpret_cast<const unsigned long long*>(layout.offsets->data()) + first : nullptr;
  }
  std::uint64_t data_shift(std::size_t first) const { return layout.offsets ? 0 : first * layout.fixed_bytes; }
  std::uint64_t message_bytes(std::size_t i) const {
    return layout.offsets ? bounds[i + 1] - bounds[i] : layout.fixed_bytes;
  }

  void setup(Scratch& scratch, std::size_t first, std::size_t n, Mode mode, const Stream* on) const {
    const bool lanes = mode == Mode::gcm && iv_bytes == 12;
    const auto grid = grid_for(n);
    const std::uint8_t* key_bytes_at = keys.data() + first * key_bytes;
    const std::uint8_t* ivs_at = ivs.data() + first * iv_bytes;
    if (mode == Mode::ctr || lanes)  // key schedules and counters only: the light kernel
      k.setup_batch.launch({.grid = grid, .block = threads_per_block, .stream = on}, scratch.states(), key_bytes_at,
                           static_cast<std::uint32_t>(key_bytes), ivs_at, static_cast<std::uint32_t>(iv_bytes),
                           static_cast<std::uint32_t>(lanes ? Mode::gcm_lanes : mode),
                           static_cast<unsigned long long>(n));
    else
      k.setup.launch({.grid = grid, .block = threads_per_block, .stream = on}, scratch.states(), key_bytes_at,
                     static_cast<std::uint32_t>(key_bytes), ivs_at, static_cast<std::uint32_t>(iv_bytes),
                     static_cast<std::uint32_t>(mode), static_cast<unsigned long long>(n), 0ull,
                     static_cast<std::uint32_t*>(nullptr), static_cast<AesGf128*>(nullptr));
    if (lanes)
      k.setup_blocks.launch({.grid = grid_for((n + 15) / 16), .block = threads_per_block, .stream = on},
                            scratch.states(), static_cast<unsigned long long>(n));
  }

  void ctr(Scratch& scratch, std::size_t first, std::size_t n, const std::uint8_t* verdicts, const Stream* on) const {
    // Units of 32 blocks: a fixed count per message, or a prefix table for variable lengths.
    std::optional<DeviceBuffer<std::uint64_t>> unit_table;
    std::uint64_t per_message = 0, total = 0;
    if (layout.offsets) {
      std::vector<std::uint64_t> starts(n + 1, 0);
      for (std::size_t i = 0; i < n; ++i) starts[i + 1] = starts[i] + (blocks_of(message_bytes(first + i)) + 31) / 32;
      total = starts[n];
      unit_table.emplace(detail::upload_scratch<std::uint64_t>(device, starts, on));
    } else {
      per_message = std::max<std::uint64_t>(1, (blocks_of(layout.fixed_bytes) + 31) / 32);
      total = per_message * n;
    }
    if (total == 0) return;
    const std::uint64_t shift = data_shift(first);
    const auto* starts = unit_table ? reinterpret_cast<const unsigned long long*>(unit_table->data()) : nullptr;
    if (staged_batch_io(device)) {
      k.ctr_batch.launch(
          {.grid = grid_for(total), .block = threads_per_block, .shared_bytes = AES_BATCH_STAGE_BYTES, .stream = on},
          scratch.states(), in.data() + shift, out.data() + shift, offsets(first),
          static_cast<unsigned long long>(layout.fixed_bytes), static_cast<unsigned long long>(n),
          static_cast<unsigned long long>(per_message), starts, static_cast<unsigned long long>(total), verdicts);
      return;
    }
    k.ctr.launch({.grid = grid_for(total), .block = threads_per_block, .stream = on}, scratch.states(),
                 in.data() + shift, out.data() + shift, offsets(first),
                 static_cast<unsigned long long>(layout.fixed_bytes), static_cast<unsigned long long>(n),
                 static_cast<unsigned long long>(per_message), starts, static_cast<unsigned long long>(total), 1u,
                 verdicts);
  }
};

void check_batch_common(const Device& device, std::size_t key_bytes, BufferView<const std::uint8_t> keys,
                        std::size_t iv_bytes, BufferView<const std::uint8_t> ivs, const BatchLayout& layout,
                        BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out) {
  check_key(key_bytes);
  check_on(device, keys.device(), "the keys");
  check_on(device, ivs.device(), "the IVs");
  check_in_out(device, in, out);
  if (keys.size() != layout.count * key_bytes)
    fail(std::to_string(layout.count) + " messages need " + std::to_string(layout.count * key_bytes) +
         " key bytes, got " + std::to_string(keys.size()));
  if (ivs.size() != layout.count * iv_bytes)
    fail(std::to_string(layout.count) + " messages need " + std::to_string(layout.count * iv_bytes) +
         " IV bytes, got " + std::to_string(ivs.size()));
}

void check_gcm_batch(const BatchCall& call, const BatchLayout& aad_layout, std::size_t iv_bytes, std::size_t tag_bytes,
                     std::size_t tags_size) {
  const BatchLayout& layout = call.layout;
  if (iv_bytes == 0) fail("a GCM IV is at least 1 byte (12 recommended), got 0");
  if (!valid_gcm_tag_bytes(tag_bytes))
    fail("a GCM tag is 16, 15, 14, 13, 12, 8 or 4 bytes, got " + std::to_string(tag_bytes));
  if (aad_layout.count != layout.count)
    fail("AAD layout of " + std::to_string(aad_layout.count) + " messages for a batch of " +
         std::to_string(layout.count));
  if (tags_size != layout.count * tag_bytes)
    fail(std::to_string(layout.count) + " messages need " + std::to_string(layout.count * tag_bytes) +
         " tag bytes, got " + std::to_string(tags_size));
  for (std::size_t i = 0; i < (layout.offsets ? layout.count : std::min<std::size_t>(layout.count, 1)); ++i)
    if (call.message_bytes(i) > gcm_max_message_bytes)
      fail("GCM message " + std::to_string(i) + " is longer than 2^32 - 2 blocks");
}

// GHASH and tag of a GCM batch slice (one thread per message).
void gcm_batch_tags(const BatchCall& call, Scratch& scratch, std::size_t first, std::size_t n,
                    BufferView<const std::uint8_t> aad, const BatchLayout& aad_layout,
                    BufferView<const std::uint8_t> data, std::size_t tag_bytes, std::uint8_t* tags_out,
                    const std::uint8_t* tags_expected, detail::BatchVerdicts* verdicts, const Stream* on) {
  const auto* aad_offsets =
      aad_layout.offsets ? reinterpret_cast<const unsigned long long*>(aad_layout.offsets->data()) + first : nullptr;
  const std::uint64_t aad_shift = aad_layout.offsets ? 0 : first * aad_layout.fixed_bytes;
  const std::uint64_t shift = call.data_shift(first);
  call.k.ghash.launch({.grid = grid_for(n), .block = threads_per_block, .stream = on}, scratch.states(),
                      aad.data() + aad_shift, aad_offsets, static_cast<unsigned long long>(aad_layout.fixed_bytes),
                      data.data() + shift, call.offsets(first),
                      static_cast<unsigned long long>(call.layout.fixed_bytes), static_cast<unsigned long long>(n),
                      1ull, 0ull, static_cast<const AesGf128*>(nullptr), 0ull, 0ull);
  call.k.tag.launch({.grid = grid_for(n), .block = threads_per_block, .stream = on}, scratch.states(),
                    static_cast<unsigned long long>(n), static_cast<std::uint32_t>(tag_bytes),
                    tags_out ? tags_out + first * tag_bytes : nullptr,
                    tags_expected ? tags_expected + first * tag_bytes : nullptr,
                    verdicts ? verdicts->verdicts() + first : nullptr, verdicts ? verdicts->failures() : nullptr);
}

// Runs slice(scratch, first, n, on) for each slice of the call's batch (batch_slice_messages() at
// most, which bounds the scratch state: 312 bytes a message, two slices' worth), after
// ready(first, n, on) where given. The slices alternate between two lanes, the call's stream and
// a side stream forked from it (side_stream.hpp), each with scratch of its own: one slice's
// kernels alone leave SMs idle at their ends (the setup kernel before the keystream, the
// keystream kernel's last wave), and the other lane's slice fills them (measured on an H100,
// 10^6 x 1500 B: +0.5 to 2% over one stream; the keystream kernel itself is most of the call).
// The slices write disjoint messages, so nothing orders them but their lane's scratch, which is
// wiped as soon as the lane's last slice is queued. The side stream joins the call's stream when
// the loop ends, behind its scratch's wipe. One slice: no side stream.
template <class Slice>
void for_each_slice(const BatchCall& call, const SliceInputs& ready, Slice&& slice) {
  const std::size_t batch_slice = batch_slice_messages();
  const std::size_t count = call.layout.count, per_slice = std::min(batch_slice, count);
  const std::size_t slices = (count + batch_slice - 1) / batch_slice;
  std::optional<detail::SideStream> side;
  if (slices > 1) side.emplace(call.device, call.stream);
  std::optional<Scratch> scratch[2];
  for (std::size_t k = 0; k < slices; ++k) {
    const std::size_t first = k * batch_slice, n = std::min(batch_slice, count - first);
    const Stream* on = k % 2 == 1 ? &side->stream() : call.stream;
    if (!scratch[k % 2]) scratch[k % 2].emplace(call.device, per_slice, 0, on);
    if (ready) ready(first, n, detail::call_stream(call.device, on));
    slice(*scratch[k % 2], first, n, on);
    // A lane's last slice: its scratch is wiped and freed now, on its stream, so that the wipe
    // runs beside the other lane's last slice instead of after it.
    if (k + 2 >= slices) scratch[k % 2].reset();
  }
}

}  // namespace

bool valid_key_bytes(std::size_t key_bytes) noexcept {
  return key_bytes == 16 || key_bytes == 24 || key_bytes == 32;
}

bool valid_gcm_tag_bytes(std::size_t tag_bytes) noexcept {
  return (tag_bytes >= 12 && tag_bytes <= 16) || tag_bytes == 8 || tag_bytes == 4;
}

void aes_ctr_xor(const Device& device, std::span<const std::uint8_t> key,
                 std::span<const std::uint8_t, block_bytes> counter_block, BufferView<const std::uint8_t> in,
                 BufferView<std::uint8_t> out, const Stream* stream) {
  check_key(key.size());
  check_in_out(device, in, out);
  if (in.empty()) return;
  const AesKernels& k = aes_kernels(device);
  Scratch scratch(device, 1, key.size() + block_bytes, stream, true);
  setup_bulk(k, scratch, key, counter_block, Mode::ctr, 0, stream);
  ctr_bulk(k, scratch, in, out, nullptr, stream);
}

void aes_gcm_seal(const Device& device, std::span<const std::uint8_t> key, std::span<const std::uint8_t> iv,
                  BufferView<const std::uint8_t> aad, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
                  BufferView<std::uint8_t> tag, const Stream* stream) {
  check_gcm(device, key, iv, aad, in, out, tag.size(), tag.device());
  const AesKernels& k = aes_kernels(device);
  Scratch scratch(device, 1, key.size() + iv.size(), stream, true);
  const std::uint64_t chunk = ghash_chunk_blocks(k, aad.size(), out);
  setup_bulk(k, scratch, key, iv, Mode::gcm, chunk, stream);
  if (!in.empty()) ctr_bulk(k, scratch, in, out, nullptr, stream);
  ghash_bulk(device, k, scratch, aad, out, chunk, stream);
  k.tag.launch({.grid = 1, .block = 1, .stream = stream}, static_cast<const AesState*>(scratch.states()), 1ull,
               static_cast<std::uint32_t>(tag.size()), tag.data(), static_cast<const std::uint8_t*>(nullptr),
               static_cast<std::uint8_t*>(nullptr), static_cast<unsigned long long*>(nullptr));
}

bool aes_gcm_open(const Device& device, std::span<const std::uint8_t> key, std::span<const std::uint8_t> iv,
                  BufferView<const std::uint8_t> aad, BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
                  BufferView<const std::uint8_t> tag, const Stream* stream) {
  check_gcm(device, key, iv, aad, in, out, tag.size(), tag.device());
  const AesKernels& k = aes_kernels(device);
  DeviceBuffer<std::uint8_t> verdict = detail::call_scratch<std::uint8_t>(device, 1, stream);
  std::uint8_t ok = 0;
  {
    Scratch scratch(device, 1, key.size() + iv.size(), stream, true);
    const std::uint64_t chunk = ghash_chunk_blocks(k, aad.size(), in);
    setup_bulk(k, scratch, key, iv, Mode::gcm, chunk, stream);
    ghash_bulk(device, k, scratch, aad, in, chunk, stream);
    k.tag.launch({.grid = 1, .block = 1, .stream = stream}, static_cast<const AesState*>(scratch.states()), 1ull,
                 static_cast<std::uint32_t>(tag.size()), static_cast<std::uint8_t*>(nullptr), tag.data(),
                 verdict.data(), static_cast<unsigned long long*>(nullptr));
    // Decrypt only behind a matching tag: the CTR kernel reads the verdict and writes nothing if 0.
    if (!in.empty()) ctr_bulk(k, scratch, in, out, verdict.data(), stream);
  }
  verdict.copy_to(std::span<std::uint8_t>(&ok, 1), stream);
  detail::synchronize(device, stream);
  return ok == 1;
}

void aes_ctr_xor_batch(const Device& device, std::size_t key_bytes, BufferView<const std::uint8_t> keys,
                       BufferView<const std::uint8_t> counter_blocks, const BatchLayout& layout,
                       BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out, const Stream* stream,
                       const SliceInputs& ready) {
  check_batch_common(device, key_bytes, keys, block_bytes, counter_blocks, layout, in, out);
  if (layout.count == 0) return;
  const BatchCall call{aes_kernels(device),
                       device,
                       key_bytes,
                       keys,
                       block_bytes,
                       counter_blocks,
                       layout,
                       layout_bounds(layout, in.size(), "the data layout", device, stream),
                       in,
                       out,
                       stream};
  for_each_slice(call, ready, [&](Scratch& scratch, std::size_t first, std::size_t n, const Stream* on) {
    call.setup(scratch, first, n, Mode::ctr, on);
    call.ctr(scratch, first, n, nullptr, on);
  });
}

void aes_gcm_seal_batch(const Device& device, std::size_t key_bytes, BufferView<const std::uint8_t> keys,
                        std::size_t iv_bytes, BufferView<const std::uint8_t> ivs, BufferView<const std::uint8_t> aad,
                        const BatchLayout& aad_layout, const BatchLayout& layout, BufferView<const std::uint8_t> in,
                        BufferView<std::uint8_t> out, std::size_t tag_bytes, BufferView<std::uint8_t> tags,
                        const Stream* stream, const SliceInputs& ready) {
  check_batch_common(device, key_bytes, keys, iv_bytes, ivs, layout, in, out);
  check_on(device, aad.device(), "the AAD");
  check_on(device, tags.device(), "the tags");
  const BatchCall call{aes_kernels(device),
                       device,
                       key_bytes,
                       keys,
                       iv_bytes,
                       ivs,
                       layout,
                       layout_bounds(layout, in.size(), "the data layout", device, stream),
                       in,
                       out,
                       stream};
  check_gcm_batch(call, aad_layout, iv_bytes, tag_bytes, tags.size());
  (void)layout_bounds(aad_layout, aad.size(), "the AAD layout", device, stream);
  for_each_slice(call, ready, [&](Scratch& scratch, std::size_t first, std::size_t n, const Stream* on) {
    call.setup(scratch, first, n, Mode::gcm, on);
    call.ctr(scratch, first, n, nullptr, on);
    gcm_batch_tags(call, scratch, first, n, aad, aad_layout, out, tag_bytes, tags.data(), nullptr, nullptr, on);
  });
}

std::vector<std::size_t> aes_gcm_open_batch(const Device& device, std::size_t key_bytes,
                                            BufferView<const std::uint8_t> keys, std::size_t iv_bytes,
                                            BufferView<const std::uint8_t> ivs, BufferView<const std::uint8_t> aad,
                                            const BatchLayout& aad_layout, const BatchLayout& layout,
                                            BufferView<const std::uint8_t> in, BufferView<std::uint8_t> out,
                                            std::size_t tag_bytes, BufferView<const std::uint8_t> tags,
                                            const Stream* stream, const SliceInputs& ready) {
  check_batch_common(device, key_bytes, keys, iv_bytes, ivs, layout, in, out);
  check_on(device, aad.device(), "the AAD");
  check_on(device, tags.device(), "the tags");
  const BatchCall call{aes_kernels(device),
                       device,
                       key_bytes,
                       keys,
                       iv_bytes,
                       ivs,
                       layout,
                       layout_bounds(layout, in.size(), "the data layout", device, stream),
                       in,
                       out,
                       stream};
  check_gcm_batch(call, aad_layout, iv_bytes, tag_bytes, tags.size());
  (void)layout_bounds(aad_layout, aad.size(), "the AAD layout", device, stream);
  if (layout.count == 0) return {};
  // One verdict byte per message and a failure count for the whole call: the slices run without a
  // wait between them, with one at the end (BatchVerdicts::failed), after the lanes have joined.
  detail::BatchVerdicts verdicts(device, layout.count, stream);
  for_each_slice(call, ready, [&](Scratch& scratch, std::size_t first, std::size_t n, const Stream* on) {
    call.setup(scratch, first, n, Mode::gcm, on);
    gcm_batch_tags(call, scratch, first, n, aad, aad_layout, in, tag_bytes, nullptr, tags.data(), &verdicts, on);
    // Decrypt only behind a matching tag: the CTR kernel writes nothing where the verdict is 0.
    call.ctr(scratch, first, n, verdicts.verdicts() + first, on);
  });
  return verdicts.failed(stream);
}

}  // namespace opkit::ops::aes
