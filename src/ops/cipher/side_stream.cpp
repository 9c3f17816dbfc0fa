// Forked and joined side streams, kept between calls (side_stream.hpp).
#include "side_stream.hpp"

#include <optional>
#include <utility>

#include "device_secret.hpp"
#include "kept_per_device.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {
namespace {

// Streams not in use, a few a device (as many as calls have run at once, up to four).
using StreamsKept = KeptPerDevice<Stream, 4>;

StreamsKept& streams_kept() {
  static auto* pool = new StreamsKept;  // never destroyed (kept_per_device.hpp)
  return *pool;
}

Stream take_stream(const Device& device) {
  std::optional<Stream> kept = streams_kept().take(device, [](const Stream&) { return true; });
  return kept ? std::move(*kept) : device.create_stream();
}

}  // namespace

SideStream::SideStream(const Device& device, const Stream* caller)
    : device_(device), caller_(caller), stream_(take_stream(device)) {
  Event forked = device.create_event();
  forked.record(call_stream(device, caller));
  stream_->wait(forked);
}

SideStream::~SideStream() {
  try {
    Event joined = device_.create_event();
    joined.record(*stream_);
    call_stream(device_, caller_).wait(joined);
    streams_kept().give_back(std::move(*stream_));
  } catch (...) {  // a faulted context: nothing more runs on it, and the stream goes with it
  }
}

}  // namespace opkit::ops::detail
