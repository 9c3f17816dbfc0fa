// The public cipher API's AES on a device (see aes_cipher.hpp): uploads, then aes_device.hpp.
#include "aes_cipher.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "aes_device.hpp"
#include "device_secret.hpp"

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
  return out;
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
                                          const std::uint8_t* in, std::uint8_t* out, std::span<std::uint8_t> tags_out,
                                          Bytes tags_expected, const Stream* stream) {
  const std::size_t count = batch.count;
  const std::size_t key_bytes = cipher_traits(cipher).key_bytes;
  const std::size_t data_bytes = bounds.total();
  const BufferView<const std::uint8_t> in_view(device, in, data_bytes);
  const BufferView<std::uint8_t> out_view(device, out, data_bytes);
  const bool gcm = is_gcm(cipher);
  // Keys and IVs (for CTR the counter blocks, which the IVs are) in one secret buffer, copied from
  // the caller's memory as they are: no per-message table on the host. A GCM call waits for its
  // tags or verdicts, and a call without a stream for its work, before returning: their copies
  // read the caller's bytes directly. A CTR call on a stream returns with its work queued, so its
  // copies go through a staging copy of the call's own (DeviceSecret::upload).
  const std::size_t keys_size = count * key_bytes, ivs_size = count * batch.iv_bytes;
  DeviceSecret secrets(device, keys_size + ivs_size, stream);
  secrets.upload_all({batch.keys.first(keys_size), batch.ivs.first(ivs_size)}, gcm || stream == nullptr);
  const auto keys = secrets.view().subview(0, keys_size), ivs = secrets.view().subview(keys_size, ivs_size);
  // The bounds this call computed (not the caller's offsets: a CTR batch returns before the GPU
  // reads them).
  const DeviceLayout data = device_layout(device, count, batch.message_bytes, bounds.offsets(), stream);
  std::vector<std::size_t> failed;
  if (!gcm) {
    aes::aes_ctr_xor_batch(device, key_bytes, keys, ivs, data.layout, in_view, out_view, stream);
    finish_call(device, stream);
    return failed;
  }
  const DeviceBuffer<std::uint8_t> aad = upload_scratch(device, batch.aad, stream);
  const DeviceLayout aad_layout = device_layout(device, count, 0, batch.aad_offsets, stream);
  const std::size_t tag_bytes = checked.tag_bytes;
  const auto aad_view = first_bytes(aad, batch.aad.size());
  if (encrypt) {
    DeviceBuffer<std::uint8_t> tags = call_scratch<std::uint8_t>(device, count * tag_bytes, stream);
    const auto tags_view = tags.view().subview(0, count * tag_bytes);
    aes::aes_gcm_seal_batch(device, key_bytes, keys, batch.iv_bytes, ivs, aad_view, aad_layout.layout, data.layout,
                            in_view, out_view, tag_bytes, tags_view, stream);
    tags_view.copy_to(tags_out.first(count * tag_bytes), stream);
    synchronize(device, stream);
    return failed;
  }
  const DeviceBuffer<std::uint8_t> tags = upload_scratch(device, tags_expected.first(count * tag_bytes), stream);
  failed =
      aes::aes_gcm_open_batch(device, key_bytes, keys, batch.iv_bytes, ivs, aad_view, aad_layout.layout, data.layout,
                              in_view, out_view, tag_bytes, first_bytes(tags, count * tag_bytes), stream);
  synchronize(device, stream);
  return failed;
}

}  // namespace opkit::ops::detail
