// Stream (ordered queue of device work) and Event (a point in a stream, for ordering and timing).
#pragma once

#include <memory>

#include "opkit/device.hpp"

namespace opkit {

namespace backend {
class Stream;
class Event;
}  // namespace backend
namespace detail {
struct DeviceAccess;  // src/'s way to the backend objects (src/core/device_access.hpp)
}

class Event;

class Stream {
 public:
  Stream(Device device, std::shared_ptr<backend::Stream> impl);

  void synchronize() const;
  // Work queued here after the call waits for the work `event` recorded, on whichever stream of
  // this device (cuStreamWaitEvent: the host does not wait).
  void wait(const Event& event) const;
  // Whether all work queued here so far has finished (cuStreamQuery); does not block.
  bool query() const;
  // The backend's own handle (a CUstream for CUDA; nullptr means the default stream).
  void* native_handle() const;
  const Device& device() const { return device_; }

 private:
  friend struct detail::DeviceAccess;
  Device device_;
  std::shared_ptr<backend::Stream> impl_;
};

class Event {
 public:
  Event(Device device, std::shared_ptr<backend::Event> impl);

  void record(const Stream& stream);
  void synchronize() const;
  // Whether the work it recorded has finished (true before any record); does not block.
  bool query() const;
  const Device& device() const { return device_; }
  // Milliseconds between two recorded events (both must have completed or be waited for).
  static float elapsed_ms(const Event& start, const Event& stop);

 private:
  friend class Stream;
  Device device_;
  std::shared_ptr<backend::Event> impl_;
};

}  // namespace opkit
