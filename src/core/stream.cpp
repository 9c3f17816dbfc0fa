// Stream and Event: thin handles over the backend's objects.
#include "opkit/stream.hpp"

#include "device_access.hpp"
#include "opkit/backend.hpp"
#include "opkit/error.hpp"

namespace opkit {

Stream::Stream(Device device, std::shared_ptr<backend::Stream> impl)
    : device_(std::move(device)), impl_(std::move(impl)) {}

void Stream::synchronize() const {
  impl_->synchronize();
}
void Stream::wait(const Event& event) const {
  if (!(event.device_ == device_))
    throw Error(Errc::invalid_argument, "Stream::wait", "the event belongs to another device");
  impl_->wait(*event.impl_);
}

bool Stream::query() const {
  return impl_->query();
}

void* Stream::native_handle() const {
  return impl_->native_handle();
}

Event::Event(Device device, std::shared_ptr<backend::Event> impl)
    : device_(std::move(device)), impl_(std::move(impl)) {}

void Event::record(const Stream& stream) {
  if (!(stream.device() == device_))
    throw Error(Errc::invalid_argument, "Event::record", "the stream belongs to another device");
  impl_->record(detail::DeviceAccess::impl(stream));
}

void Event::synchronize() const {
  impl_->synchronize();
}

bool Event::query() const {
  return impl_->query();
}

float Event::elapsed_ms(const Event& start, const Event& stop) {
  if (!(start.device_ == stop.device_))
    throw Error(Errc::invalid_argument, "Event::elapsed_ms", "the events belong to different devices");
  return stop.impl_->elapsed_ms_since(*start.impl_);
}

}  // namespace opkit
