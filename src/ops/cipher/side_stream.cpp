// Forked and joined side streams, kept between calls (side_stream.hpp).
#include "side_stream.hpp"

#include <mutex>
#include <utility>
#include <vector>

#include "device_secret.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {
namespace {

// Streams not in use, any device's; a call running takes one of its device's or makes one. At most
// max_kept a device are kept (as many as calls have run at once, up to that).
class StreamPool {
 public:
  static StreamPool& instance() {
    static auto* pool = new StreamPool;  // never destroyed (side_stream.hpp)
    return *pool;
  }

  Stream take(const Device& device) {
    {
      const std::lock_guard lock(mutex_);
      for (auto it = kept_.begin(); it != kept_.end(); ++it) {
        if (it->device() == device) {
          Stream stream = std::move(*it);
          kept_.erase(it);
          return stream;
        }
      }
    }
    return device.create_stream();
  }

  void give_back(Stream stream) {
    std::optional<Stream> dropped;  // destroyed after the lock is released
    const std::lock_guard lock(mutex_);
    std::size_t same = 0;
    for (const Stream& kept : kept_) same += kept.device() == stream.device() ? 1 : 0;
    if (same >= max_kept) {
      dropped.emplace(std::move(stream));
      return;
    }
    kept_.push_back(std::move(stream));
  }

 private:
  static constexpr std::size_t max_kept = 4;
  std::mutex mutex_;
  std::vector<Stream> kept_;
};

}  // namespace

SideStream::SideStream(const Device& device, const Stream* caller)
    : device_(device), caller_(caller), stream_(StreamPool::instance().take(device)) {
  Event forked = device.create_event();
  forked.record(call_stream(device, caller));
  stream_->wait(forked);
}

SideStream::~SideStream() {
  try {
    Event joined = device_.create_event();
    joined.record(*stream_);
    call_stream(device_, caller_).wait(joined);
    StreamPool::instance().give_back(std::move(*stream_));
  } catch (...) {  // a faulted context: nothing more runs on it, and the stream goes with it
  }
}

}  // namespace opkit::ops::detail
