// The pinned staging ring of host-to-device copies (see pinned_ring.hpp).
#include "pinned_ring.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "kept_per_device.hpp"
#include "parts_over_cores.hpp"

namespace opkit::ops::detail {
namespace {

// Pinned memory kept between rings and downloads: a few buffers a device (one per call running at
// once), wiped before they are given back.
using PinnedKept = KeptPerDevice<PinnedBuffer<std::uint8_t>, 2>;

PinnedKept& pinned_kept() {
  static auto* pool = new PinnedKept;  // never destroyed (kept_per_device.hpp)
  return *pool;
}

// A kept buffer of `device` of at least `bytes`, else a new one.
PinnedBuffer<std::uint8_t> take_pinned(const Device& device, std::size_t bytes) {
  std::optional<PinnedBuffer<std::uint8_t>> kept =
      pinned_kept().take(device, [&](const PinnedBuffer<std::uint8_t>& b) { return b.size() >= bytes; });
  return kept ? std::move(*kept) : PinnedBuffer<std::uint8_t>(device, bytes);
}

// f(from, n) over [0, bytes) in 64 KiB parts, on several cores from 256 KiB on.
template <class F>
void over_cores(std::size_t bytes, F&& f) {
  parts_over_cores(bytes, std::size_t{64} << 10, 4, f);
}

void cleanse_over_cores(std::uint8_t* bytes, std::size_t n) {
  over_cores(n, [&](std::size_t from, std::size_t k) { OPENSSL_cleanse(bytes + from, k); });
}

PinnedRingSizes at_least_one(PinnedRingSizes sizes) {
  sizes.slot_bytes = std::max<std::size_t>(sizes.slot_bytes, 1);
  sizes.slots = std::max<std::size_t>(sizes.slots, 1);
  return sizes;
}

}  // namespace

PinnedRing::PinnedRing(const Device& device, const PinnedRingSizes& sizes)
    : device_(device),
      stream_(device.create_stream()),
      sizes_(at_least_one(sizes)),
      memory_(take_pinned(device, sizes_.slot_bytes * sizes_.slots)),
      slots_(sizes_.slots) {
  events_.reserve(sizes_.slots);
  for (std::size_t i = 0; i < sizes_.slots; ++i) events_.push_back(device.create_event());
}

PinnedRing::~PinnedRing() {
  try {
    finish();
  } catch (...) {
    // A copy may not have run (a faulted context, an interrupted wait): wipe what the slots may
    // hold and free the memory (the driver's free waits for copies that read it) rather than
    // give it to another call.
    cleanse_over_cores(memory_.data(), sizes_.slot_bytes * sizes_.slots);
    return;
  }
  pinned_kept().give_back(std::move(memory_));
}

void PinnedRing::copy(std::span<const std::uint8_t> host, std::uint8_t* device_dst) {
  while (!host.empty()) {
    Slot& slot = slots_[current_];
    if (slot.used == sizes_.slot_bytes) {
      close_slot();
      continue;
    }
    const std::size_t n = std::min(host.size(), sizes_.slot_bytes - slot.used);
    std::uint8_t* staged = memory_.data() + current_ * sizes_.slot_bytes + slot.used;
    over_cores(n, [&](std::size_t from, std::size_t k) { std::memcpy(staged + from, host.data() + from, k); });
    slot.used += n;
    slot.dirty = std::max(slot.dirty, slot.used);
    device_.copy(device_dst, staged, n, CopyKind::host_to_device, &stream_);
    host = host.subspan(n);
    device_dst += n;
  }
}

const Event& PinnedRing::mark() {
  if (slots_[current_].used != 0) close_slot();
  if (any_closed_) return events_[last_closed_];
  events_[current_].record(stream_);  // nothing copied yet: an event behind nothing of ours
  return events_[current_];
}

void PinnedRing::finish() {
  if (slots_[current_].used != 0) close_slot();
  // Oldest first (the slot after the last one closed): wiping the slots whose copies have run
  // overlaps the copies still running.
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    const std::size_t i = (current_ + k) % slots_.size();
    Slot& slot = slots_[i];
    if (slot.pending) {
      events_[i].synchronize();
      slot.pending = false;
    }
    if (slot.dirty != 0) cleanse_over_cores(memory_.data() + i * sizes_.slot_bytes, slot.dirty);
    slot.dirty = 0;
    slot.used = 0;
  }
}

void download_through_pinned(BufferView<const std::uint8_t> from, std::span<std::uint8_t> to, const Stream& stream) {
  if (to.empty()) return;
  PinnedBuffer<std::uint8_t> pinned = take_pinned(from.device(), to.size());
  from.subview(0, to.size()).copy_to(std::span<std::uint8_t>(pinned.data(), to.size()), &stream);
  stream.synchronize();
  over_cores(to.size(), [&](std::size_t at, std::size_t k) { std::memcpy(to.data() + at, pinned.data() + at, k); });
  cleanse_over_cores(pinned.data(), to.size());
  pinned_kept().give_back(std::move(pinned));
}

void PinnedRing::close_slot() {
  events_[current_].record(stream_);
  slots_[current_].pending = true;
  last_closed_ = current_;
  any_closed_ = true;
  current_ = (current_ + 1) % slots_.size();
  Slot& next = slots_[current_];
  if (next.pending) {
    events_[current_].synchronize();
    next.pending = false;
  }
  next.used = 0;
}

}  // namespace opkit::ops::detail
