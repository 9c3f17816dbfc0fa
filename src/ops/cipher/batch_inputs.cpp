// Where a batch's keys, IVs and AAD reach its kernels (see batch_inputs.hpp).
#include "batch_inputs.hpp"

#include <span>
#include <vector>

namespace opkit::ops::detail {
namespace {

using DeviceBytes = std::optional<BufferView<const std::uint8_t>>;

// Copies start 16-byte aligned in the secret, whatever the length of the one before.
constexpr std::size_t copy_alignment = 16;

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

// One input: host bytes, or device bytes read in place when aligned for the kernels' loads.
struct Source {
  std::span<const std::uint8_t> host;
  const DeviceBytes& device;
  std::size_t word_bytes;

  bool in_place() const { return device && reinterpret_cast<std::uintptr_t>(device->data()) % word_bytes == 0; }
  std::size_t size() const { return device ? device->size() : host.size(); }
};

}  // namespace

BatchInputs::BatchInputs(const Device& device, const CipherBatch& batch, const BatchInputNeeds& needs,
                         const Stream* stream)
    : device_(device) {
  const bool with_aad = needs.aad && !batch.aad_offsets.empty();
  static const DeviceBytes none;
  const Source sources[] = {
      {batch.keys, batch.device_keys, needs.word_bytes},
      {batch.ivs, batch.device_ivs, needs.word_bytes},
      {with_aad ? batch.aad : std::span<const std::uint8_t>{}, with_aad ? batch.device_aad : none, 1}};
  Placed* placed[] = {&keys_, &ivs_, &aad_};
  std::size_t copy_bytes = 0;
  for (const Source& source : sources)
    if (!source.in_place()) copy_bytes += round_up(source.size(), copy_alignment);
  if (copy_bytes != 0) copies_.emplace(device, copy_bytes, stream);
  std::size_t at = 0;
  for (std::size_t i = 0; i < std::size(sources); ++i) {
    const Source& source = sources[i];
    if (source.in_place()) {
      *placed[i] = {source.device->data(), source.device->size()};
      continue;
    }
    if (source.device)
      copies_->copy_on_device(*source.device, at);
    else if (needs.call_waits)
      copies_->upload_waited(source.host, at);
    else
      copies_->upload(source.host, at);
    *placed[i] = {copies_ ? copies_->data() + at : nullptr, source.size()};
    at += round_up(source.size(), copy_alignment);
  }
  if (!with_aad) return;
  // A call that returns before its work has run must not leave the caller's offsets to be read
  // later (pinned memory is read by DMA when the copy runs): it uploads a copy of its own.
  if (needs.call_waits) {
    aad_offsets_.emplace(upload_scratch(device, batch.aad_offsets, stream));
  } else {
    const std::vector<std::uint64_t> own(batch.aad_offsets.begin(), batch.aad_offsets.end());
    aad_offsets_.emplace(upload_scratch(device, std::span<const std::uint64_t>(own), stream));
  }
}

}  // namespace opkit::ops::detail
