// Where a batch's keys, IVs and AAD reach its kernels (see batch_inputs.hpp).
#include "batch_inputs.hpp"

#include <algorithm>
#include <mutex>
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
  bool from_host() const { return !device && !host.empty(); }
};

std::mutex sizes_mutex;
StageSizes sizes_now;

std::span<const std::uint8_t> bytes_of(std::span<const std::uint64_t> words) {
  return {reinterpret_cast<const std::uint8_t*>(words.data()), words.size_bytes()};
}

}  // namespace

StageSizes stage_sizes() {
  const std::lock_guard lock(sizes_mutex);
  return sizes_now;
}

void set_stage_sizes(const StageSizes& sizes) {
  const std::lock_guard lock(sizes_mutex);
  sizes_now = sizes;
}

BatchInputs::BatchInputs(const Device& device, const CipherBatch& batch, const BatchInputNeeds& needs,
                         const Stream* stream)
    : device_(device), stream_(stream), count_(batch.count), chunk_(std::max<std::size_t>(batch.count, 1)) {
  place(batch, needs, stream);
}

void BatchInputs::place(const CipherBatch& batch, const BatchInputNeeds& needs, const Stream* stream) {
  const bool with_aad = needs.aad && !batch.aad_offsets.empty();
  static const DeviceBytes none;
  const Source sources[] = {
      {batch.keys, batch.device_keys, needs.word_bytes},
      {batch.ivs, batch.device_ivs, needs.word_bytes},
      {with_aad ? batch.aad : std::span<const std::uint8_t>{}, with_aad ? batch.device_aad : none, 1},
      {needs.expected_tags, none, 1}};
  Placed* placed[] = {&keys_, &ivs_, &aad_, &tags_};
  Streamed* streamed[] = {&streamed_keys_, &streamed_ivs_, &streamed_aad_, &streamed_tags_};

  const StageSizes sizes = stage_sizes();
  const bool streaming =
      std::any_of(std::begin(sources), std::end(sources), [](const Source& s) { return s.from_host(); }) &&
      batch.count > std::max<std::size_t>(sizes.chunk_messages, 1);
  std::size_t copy_bytes = 0;
  for (const Source& source : sources)
    if (!source.in_place()) copy_bytes += round_up(source.size(), copy_alignment);
  const std::size_t offsets_at = copy_bytes;  // streamed AAD offsets follow the inputs in the secret
  if (streaming && with_aad) copy_bytes += round_up(batch.aad_offsets.size_bytes(), copy_alignment);
  if (streaming) {
    chunk_ = std::max<std::size_t>(sizes.chunk_messages, 1);
    ring_.emplace(device_, sizes.ring);
  }
  if (copy_bytes != 0) copies_.emplace(device_, copy_bytes, streaming ? &ring_->stream() : stream);
  if (streaming &&
      std::any_of(std::begin(sources), std::end(sources), [](const Source& s) { return s.device && !s.in_place(); })) {
    // The caller's device inputs are ordered on the call's stream: the ring's stream, which copies
    // them into the secret, follows it first.
    Event caller_ready = device_.create_event();
    caller_ready.record(call_stream(device_, stream));
    ring_->stream().wait(caller_ready);
  }

  std::size_t at = 0;
  for (std::size_t i = 0; i < std::size(sources); ++i) {
    const Source& source = sources[i];
    if (source.in_place()) {
      *placed[i] = {source.device->data(), source.device->size()};
      continue;
    }
    if (source.device)
      copies_->copy_on_device(*source.device, at);
    else if (streaming)
      *streamed[i] = {source.host, copies_->data() + at, batch.count == 0 ? 0 : source.size() / batch.count};
    else if (needs.call_waits)
      copies_->upload_waited(source.host, at);
    else
      copies_->upload(source.host, at);
    *placed[i] = {copies_ ? copies_->data() + at : nullptr, source.size()};
    at += round_up(source.size(), copy_alignment);
  }
  if (!with_aad) return;
  if (streaming) {
    host_aad_offsets_ = batch.aad_offsets;
    streamed_aad_offsets_ = copies_->data() + offsets_at;
    aad_offsets_ = reinterpret_cast<const std::uint64_t*>(streamed_aad_offsets_);
    return;
  }
  // upload_scratch copies the caller's offsets before it returns (a call may return before its
  // work has run) and keeps that copy until the stream has passed it.
  aad_offsets_scratch_.emplace(upload_scratch(device_, batch.aad_offsets, stream));
  aad_offsets_ = aad_offsets_scratch_->data();
}

BatchInputs::~BatchInputs() {
  if (!ring_) return;
  try {
    // The secret is zeroed and freed on the ring's stream: behind the kernels queued on the
    // call's stream that read it.
    Event kernels_queued = device_.create_event();
    kernels_queued.record(call_stream(device_, stream_));
    ring_->stream().wait(kernels_queued);
  } catch (...) {  // a faulted context: none of its work runs any more
  }
  copies_.reset();
  if (stream_ == nullptr) {
    try {  // a call without a stream returns with its secrets zeroed
      ring_->stream().synchronize();
    } catch (...) {
    }
  }
  // ring_ then waits for its copies (done by now unless something failed) and wipes its slots.
}

void BatchInputs::require(std::size_t first, std::size_t count, const Stream& on) {
  if (!ring_) return;
  const std::size_t end = std::min(first + count, count_);
  while (uploaded_ < end) upload_next_chunk();
  on.wait(ring_->mark());
}

void BatchInputs::finish_uploads() {
  if (ring_) ring_->finish();
}

void BatchInputs::upload_next_chunk() {
  const std::size_t first = uploaded_, n = std::min(chunk_, count_ - uploaded_);
  for (const Streamed* input : {&streamed_keys_, &streamed_ivs_, &streamed_tags_})
    if (input->device != nullptr)
      ring_->copy(input->host.subspan(first * input->width, n * input->width), input->device + first * input->width);
  if (!host_aad_offsets_.empty()) {
    if (streamed_aad_.device != nullptr) {
      const std::uint64_t from = host_aad_offsets_[first], to = host_aad_offsets_[first + n];
      ring_->copy(streamed_aad_.host.subspan(from, to - from), streamed_aad_.device + from);
    }
    // Entries first + 1 .. first + n: entry `first` came with the chunk before (the first chunk
    // brings entry 0), so that no two copies write one entry while a kernel may read it.
    const std::size_t from = first == 0 ? 0 : first + 1;
    ring_->copy(bytes_of(host_aad_offsets_.subspan(from, first + n + 1 - from)),
                streamed_aad_offsets_ + from * sizeof(std::uint64_t));
  }
  uploaded_ = first + n;
}

}  // namespace opkit::ops::detail
