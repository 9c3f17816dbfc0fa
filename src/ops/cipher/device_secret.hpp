// Device memory that holds key material (keys, IVs, Poly1305 keys, key schedules): zeroed by work
// queued on the call's stream and waited for when it goes out of scope, whether the work
// succeeded or threw, then freed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {

// Waits for the work queued on `stream` (nullptr: the device's default stream).
inline void synchronize(const Device& device, const Stream* stream) {
  if (stream != nullptr)
    stream->synchronize();
  else
    device.default_stream().synchronize();
}

class DeviceSecret {
 public:
  DeviceSecret(const Device& device, std::size_t bytes, const Stream* stream)
      : buffer_(device.alloc<std::uint8_t>(std::max<std::size_t>(bytes, 1))), size_(bytes), stream_(stream) {}
  ~DeviceSecret() {
    try {
      buffer_.fill(0, stream_);
      synchronize(buffer_.device(), stream_);
    } catch (...) {  // a faulted context: the memory goes with it
    }
  }
  DeviceSecret(const DeviceSecret&) = delete;
  DeviceSecret& operator=(const DeviceSecret&) = delete;

  std::uint8_t* data() noexcept { return buffer_.data(); }
  std::size_t size() const noexcept { return size_; }
  BufferView<const std::uint8_t> view() const { return buffer_.view().subview(0, size_); }
  // Copies `host` to byte `at` (queued on the stream; pageable host memory is read before return).
  void upload(std::span<const std::uint8_t> host, std::size_t at = 0) {
    if (!host.empty()) buffer_.view().subview(at, host.size()).copy_from(host, stream_);
  }

 private:
  DeviceBuffer<std::uint8_t> buffer_;
  std::size_t size_;
  const Stream* stream_;
};

}  // namespace opkit::ops::detail
