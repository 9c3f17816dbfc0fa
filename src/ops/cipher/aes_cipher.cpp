// The public cipher API's AES on a device (see aes_cipher.hpp): uploads, then aes_device.hpp.
#include "aes_cipher.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "aes_device.hpp"
#include "batch_inputs.hpp"
#include "device_secret.hpp"
#include "pinned_ring.hpp"

namespace opkit::ops::detail {
namespace {

bool is_gcm(Cipher cipher) {
  return cipher == Cipher::aes_128_gcm || cipher == Cipher::aes_192_gcm || cipher == Cipher::aes_256_gcm;
}

BufferView<const std::uint8_t> first_bytes(const DeviceBuffer<std::uint8_t>& buffer, std::size_t bytes) {
  return buffer.view().subview(0, bytes);
}

// A batch's message bounds on the device (none for a fixed length).
struct DeviceLayout {
  std::optional<DeviceBuffer<std::uint64_t>> offsets;
  aes::BatchLayout layout;
};

DeviceLayout device_layout(const Device& device, std::size_t count, std::size_t fixed_bytes,
                           std::span<const std::uint64_t> offsets, const Stream* stream) {
  DeviceLayout out{std::nullopt, {.count = count, .fixed_bytes = fixed_bytes}};
  if (offsets.empty()) return out;
  out.offsets.emplace(upload_scratch(device, offsets, stream));
  out.layout.fixed_bytes = 0;
  out.layout.offsets = std::as_const(*out.offsets).view();
  out.layout.host_offsets = offsets;  // so that aes_device.cpp need not copy them back
  return out;
}

// The AAD layout of a batch whose AAD offsets (if any) BatchInputs holds on the device.
aes::BatchLayout aad_layout_of(const BatchInputs& inputs, const CipherBatch& batch) {
  aes::BatchLayout layout{.count = batch.count, .fixed_bytes = 0};
  if (inputs.aad_offsets() == nullptr) return layout;
  layout.offsets = BufferView<const std::uint64_t>(inputs.aad().device(), inputs.aad_offsets(), batch.count + 1);
  layout.host_offsets = batch.aad_offsets;
  return layout;
}

}  // namespace

bool aes_device_bulk(const Device& device, Cipher cipher, bool encrypt, const CipherKey& key, const Iv16& iv,
                     const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, TagOut tag_out, Bytes tag_expected,
                     const Stream* stream) {
  const BufferView<const std::uint8_t> in_view(device, in, bytes);
  const BufferView<std::uint8_t> out_view(device, out, bytes);
  if (!is_gcm(cipher)) {
    aes::aes_ctr_xor(device, key.key, iv, in_view, out_view, stream);
    finish_call(device, stream);
    return true;
  }
  // The AAD as DeviceSecret uploads it: up to 256 bytes as a kernel parameter, so that an
  // encryption into a device tag makes no host copy and a CUDA graph captures it whole.
  DeviceSecret aad(device, key.aad.size(), stream);
  aad.upload(key.aad);
  if (encrypt) {
    if (tag_out.on_device) {
      aes::aes_gcm_seal(device, key.key, key.iv, aad.view(), in_view, out_view,
                        BufferView<std::uint8_t>(device, tag_out.bytes.data(), tag_out.bytes.size()), stream);
      finish_call(device, stream);
      return true;
    }
    DeviceBuffer<std::uint8_t> tag = call_scratch<std::uint8_t>(device, aes::gcm_max_tag_bytes, stream);
    aes::aes_gcm_seal(device, key.key, key.iv, aad.view(), in_view, out_view,
                      tag.view().subview(0, tag_out.bytes.size()), stream);
    tag.view().subview(0, tag_out.bytes.size()).copy_to(tag_out.bytes, stream);
    synchronize(device, stream);
    return true;
  }
  // The call waits for its verdict below, so the caller's tag bytes are read in place.
  const DeviceBuffer<std::uint8_t> tag = upload_scratch(device, tag_expected, stream);
  const bool ok = aes::aes_gcm_open(device, key.key, key.iv, aad.view(), in_view, out_view,
                                    first_bytes(tag, tag_expected.size()), stream);
  synchronize(device, stream);
  return ok;
}

std::vector<std::size_t> aes_device_batch(const Device& device, Cipher cipher, bool encrypt, const CipherBatch& batch,
                                          const BatchBounds& bounds, const CheckedBatch& checked,
                                          const std::uint8_t* in, std::uint8_t* out, TagOut tags_out,
                                          TagIn tags_expected, const Stream* stream) {
  const std::size_t count = batch.count;
  const std::size_t key_bytes = cipher_traits(cipher).key_bytes;
  const std::size_t data_bytes = bounds.total();
  const BufferView<const std::uint8_t> in_view(device, in, data_bytes);
  const BufferView<std::uint8_t> out_view(device, out, data_bytes);
  const bool gcm = is_gcm(cipher);
  // Keys, IVs (for CTR the counter blocks, which the IVs are), AAD and a decryption's host tags as
  // the caller laid them out (batch_inputs.hpp): device memory read in place (the kernels load
  // bytes: any alignment), host memory copied into one secret buffer, no per-message table on the
  // host. A large batch streams host inputs in chunks through pinned memory, each slice of the AES
  // kernels asking for its own (`ready`) so that its upload overlaps the slices before it.
  // Otherwise a call that waits (GCM with host tags or decrypting, or no stream) copies host bytes
  // directly; one that returns with its work queued (CTR, or GCM into device tags, on a stream)
  // stages them.
  const bool call_waits = stream == nullptr || (gcm && !(encrypt && tags_out.on_device));
  const std::span<const std::uint8_t> host_tags = gcm && !encrypt && !tags_expected.on_device
                                                      ? tags_expected.bytes.first(count * checked.tag_bytes)
                                                      : std::span<const std::uint8_t>{};
  BatchInputs inputs(device, batch, {.word_bytes = 1, .aad = gcm, .expected_tags = host_tags, .call_waits = call_waits},
                     stream);
  const aes::SliceInputs ready = [&inputs](std::size_t first, std::size_t n, const Stream& on) {
    inputs.require(first, n, on);
  };
  const auto keys = inputs.keys(), ivs = inputs.ivs();
  // The bounds this call computed (not the caller's offsets: a CTR batch returns before the GPU
  // reads them).
  const DeviceLayout data = device_layout(device, count, batch.message_bytes, bounds.offsets(), stream);
  std::vector<std::size_t> failed;
  if (!gcm) {
    aes::aes_ctr_xor_batch(device, key_bytes, keys, ivs, data.layout, in_view, out_view, stream, ready);
    inputs.finish_uploads();
    finish_call(device, stream);
    return failed;
  }
  const auto aad_view = inputs.aad();
  const aes::BatchLayout aad_layout = aad_layout_of(inputs, batch);
  const std::size_t tag_bytes = checked.tag_bytes;
  if (encrypt && tags_out.on_device) {
    aes::aes_gcm_seal_batch(device, key_bytes, keys, batch.iv_bytes, ivs, aad_view, aad_layout, data.layout, in_view,
                            out_view, tag_bytes,
                            BufferView<std::uint8_t>(device, tags_out.bytes.data(), count * tag_bytes), stream, ready);
    inputs.finish_uploads();
    finish_call(device, stream);
    return failed;
  }
  if (encrypt) {
    DeviceBuffer<std::uint8_t> tags = call_scratch<std::uint8_t>(device, count * tag_bytes, stream);
    const auto tags_view = tags.view().subview(0, count * tag_bytes);
    aes::aes_gcm_seal_batch(device, key_bytes, keys, batch.iv_bytes, ivs, aad_view, aad_layout, data.layout, in_view,
                            out_view, tag_bytes, tags_view, stream, ready);
    inputs.finish_uploads();
    download_through_pinned(tags_view, tags_out.bytes.first(count * tag_bytes), call_stream(device, stream));
    synchronize(device, stream);
    return failed;
  }
  // The expected tags where the tag kernel reads them: the caller's device memory in place, or the
  // host bytes staged with the keys (above).
  const BufferView<const std::uint8_t> tags =
      tags_expected.on_device ? BufferView<const std::uint8_t>(device, tags_expected.bytes.data(), count * tag_bytes)
                              : inputs.expected_tags();
  failed = aes::aes_gcm_open_batch(device, key_bytes, keys, batch.iv_bytes, ivs, aad_view, aad_layout, data.layout,
                                   in_view, out_view, tag_bytes, tags, stream, ready);
  inputs.finish_uploads();
  synchronize(device, stream);
  return failed;
}

}  // namespace opkit::ops::detail
