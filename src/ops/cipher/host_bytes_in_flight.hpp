// Host bytes that a copy queued on a stream reads when the copy runs.
//
// CUDA documents that an asynchronous copy from pageable host memory has read it before the call
// returns; opkit's cipher calls relied on that, freeing or wiping their own tables and key copies
// right after queueing them. On the H100 (driver 580, 2026-12-07) an AES-256-GCM batch sealed and
// opened on one stream with no wait between opened to wrong plaintext without an authentication
// error, and the same test fails on the cpu-deferred test backend once it reads pageable copies
// when they run, as a DMA engine would (passing again with this). So a call's own host bytes for
// a queued copy are parked: kept unchanged until the stream has passed the copy (an event
// recorded behind it), then wiped (they may be key material) and freed, at a later upload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {

// Keeps `bytes` until the work queued on `stream` so far has run, then wipes and frees them. Also
// wipes and frees whatever earlier calls parked that their streams have passed.
void park_until_copied(std::vector<std::uint8_t> bytes, const Device& device, const Stream& stream);

// Wipes and frees the parked bytes whose streams have passed their copies (every call that waits
// for its work does this after the wait, so that no key copy outlives a synchronous call).
void release_copied();

// Queues a copy of `host` (copied first: the caller's memory is free once this returns) to `to`
// on `stream`.
template <class T>
void upload_in_flight(BufferView<T> to, std::span<const T> host, const Device& device, const Stream& stream) {
  if (host.empty()) return;
  std::vector<std::uint8_t> own(host.size_bytes());  // operator new: aligned for any T
  std::memcpy(own.data(), host.data(), host.size_bytes());
  to.copy_from(std::span<const T>(reinterpret_cast<const T*>(own.data()), host.size()), &stream);
  park_until_copied(std::move(own), device, stream);
}

}  // namespace opkit::ops::detail
