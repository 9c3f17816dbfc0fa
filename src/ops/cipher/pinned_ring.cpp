// The pinned staging ring of host-to-device copies (see pinned_ring.hpp).
#include "pinned_ring.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "parts_over_cores.hpp"

namespace opkit::ops::detail {
namespace {

// Pinned memory kept between rings: a few buffers a device (one per call running at once), the
// most recently given back first, wiped. Never destroyed: the process's exit releases the memory,
// and no driver call runs during static destruction.
class PinnedPool {
 public:
  static PinnedPool& instance() {
    static auto* pool = new PinnedPool;
    return *pool;
  }

  // A kept buffer of `device` of at least `bytes`, else a new one.
  PinnedBuffer<std::uint8_t> take(const Device& device, std::size_t bytes) {
    {
      const std::lock_guard lock(mutex_);
      for (auto it = kept_.begin(); it != kept_.end(); ++it) {
        if (it->device() == device && it->size() >= bytes) {
          PinnedBuffer<std::uint8_t> buffer = std::move(*it);
          kept_.erase(it);
          return buffer;
        }
      }
    }
    return {device, bytes};
  }

  // Keeps `buffer` (wiped); beyond max_kept buffers of its device, the one given back longest ago
  // is freed.
  void give_back(PinnedBuffer<std::uint8_t> buffer) {
    PinnedBuffer<std::uint8_t> dropped = std::move(buffer);  // freed after the lock is released
    const Device device = dropped.device();
    const std::lock_guard lock(mutex_);
    kept_.insert(kept_.begin(), std::move(dropped));
    std::size_t same = 0;
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->device() == device && ++same > max_kept) {
        dropped = std::move(*it);
        kept_.erase(it);
        break;
      }
    }
  }

 private:
  static constexpr std::size_t max_kept = 2;
  std::mutex mutex_;
  std::vector<PinnedBuffer<std::uint8_t>> kept_;
};

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
      memory_(PinnedPool::instance().take(device, sizes_.slot_bytes * sizes_.slots)),
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
  PinnedPool::instance().give_back(std::move(memory_));
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
  PinnedBuffer<std::uint8_t> pinned = PinnedPool::instance().take(from.device(), to.size());
  from.subview(0, to.size()).copy_to(std::span<std::uint8_t>(pinned.data(), to.size()), &stream);
  stream.synchronize();
  over_cores(to.size(), [&](std::size_t at, std::size_t k) { std::memcpy(to.data() + at, pinned.data() + at, k); });
  cleanse_over_cores(pinned.data(), to.size());
  PinnedPool::instance().give_back(std::move(pinned));
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
