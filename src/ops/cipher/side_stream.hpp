// A stream that a call forks its work onto beside the caller's stream, and that joins the
// caller's stream again when the call's work is queued: work queued on it runs after whatever the
// caller's stream held when the SideStream was made, and whatever the caller queues on its stream
// after the SideStream is gone (or waits for there) runs after everything queued on it. The
// streams are kept between calls, a few a device (creating one costs more than a small call), and
// never destroyed: no driver call runs during static destruction.
#pragma once

#include <optional>

#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {

class SideStream {
 public:
  // Forks from `caller` (nullptr: the device's default stream).
  SideStream(const Device& device, const Stream* caller);
  // Joins: the caller's stream waits for the work queued here so far. Then the stream is kept.
  ~SideStream();
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;

  const Stream& stream() const noexcept { return *stream_; }

 private:
  Device device_;
  const Stream* caller_;
  std::optional<Stream> stream_;
};

}  // namespace opkit::ops::detail
