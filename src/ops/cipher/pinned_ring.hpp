// Host bytes on their way to device memory through a ring of pinned staging slots: each piece is
// copied into a slot on the host (over the cores) and from there to the device by an asynchronous
// copy on the ring's own stream, a DMA that does not hold the host (a copy from pageable memory
// does, and runs at a fraction of the bus). So the host fills slot k + 1 while slot k crosses the
// bus and the device runs the kernels of what arrived before; a slot is filled again only once
// the copy that read it has run (an event per slot).
//
// What passes through is key material: finish() waits for the copies and wipes every slot they
// used, before the caller returns; the destructor does the same if finish() was not called. The
// pinned memory is kept between rings (pinning costs more than the copies it speeds up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/pinned_buffer.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {

struct PinnedRingSizes {
  std::size_t slot_bytes = std::size_t{1} << 20;  // one host copy and one DMA at most
  std::size_t slots = 8;
};

class PinnedRing {
 public:
  PinnedRing(const Device& device, const PinnedRingSizes& sizes);
  ~PinnedRing();
  PinnedRing(const PinnedRing&) = delete;
  PinnedRing& operator=(const PinnedRing&) = delete;

  // The stream the copies are queued on, created for this ring: it follows no other stream.
  const Stream& stream() const noexcept { return stream_; }

  // Queues the copy of `host` to `device_dst` (memory of the ring's device, usable on stream()):
  // `host` has been read when this returns. Waits for the copy that last read a slot before
  // filling it again.
  void copy(std::span<const std::uint8_t> host, std::uint8_t* device_dst);
  // An event recorded on stream() behind every copy queued so far: another stream waits for it
  // before it reads what they wrote.
  const Event& mark();
  // Waits for every copy queued and wipes the slots they read. The ring may be used again.
  void finish();

 private:
  struct Slot {
    std::size_t used = 0;   // bytes filled since the slot was last taken
    std::size_t dirty = 0;  // bytes to wipe: the most ever filled since the last wipe
    bool pending = false;   // its event is recorded behind a copy not yet waited for
  };
  void close_slot();  // records the current slot's event and takes the next slot

  Device device_;
  Stream stream_;
  PinnedRingSizes sizes_;
  PinnedBuffer<std::uint8_t> memory_;
  std::vector<Slot> slots_;
  std::vector<Event> events_;  // one per slot
  std::size_t current_ = 0;
  std::size_t last_closed_ = 0;
  bool any_closed_ = false;
};

// Device bytes to host memory through pinned memory kept between calls: one DMA at the bus's
// speed (a copy into pageable memory goes through the driver's staging, and the host waits for
// it either way), then copied out over the cores; the pinned bytes are wiped before the memory is
// kept again. Waits for `stream` up to the copy. For the batch calls' host tags, whose callers
// wait for them anyway.
void download_through_pinned(BufferView<const std::uint8_t> from, std::span<std::uint8_t> to, const Stream& stream);

}  // namespace opkit::ops::detail
