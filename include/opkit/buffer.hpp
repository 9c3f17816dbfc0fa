// Device memory: DeviceBuffer<T> owns an allocation (move-only, freed on destruction);
// BufferView<T> borrows one (from another buffer, PyTorch, CuPy). Both pass to a kernel as T*.
// A const DeviceBuffer is read-only (data() is const T*, views are BufferView<const T>); a view's
// constness is in its element type, as with std::span: BufferView<const T> cannot be written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/stream.hpp"

namespace opkit {

template <class T>
class BufferView {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable elements");

 public:
  using Element = std::remove_const_t<T>;

  BufferView(Device device, T* data, std::size_t size) : device_(std::move(device)), data_(data), size_(size) {}

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  bool empty() const noexcept { return size_ == 0; }
  const Device& device() const noexcept { return device_; }

  // Elements [offset, offset + count) as a view.
  BufferView subview(std::size_t offset, std::size_t count) const {
    if (offset > size_ || count > size_ - offset)
      throw Error(Errc::invalid_argument, "BufferView::subview",
                  "range [" + std::to_string(offset) + ", +" + std::to_string(count) + ") outside a buffer of " +
                      std::to_string(size_) + " elements");
    return BufferView(device_, data_ + offset, count);
  }

  // With a stream the copy is queued there and may read `host` when it runs, pageable memory too:
  // CUDA documents that it stages pageable memory before the call returns, but a failure on an
  // H100 matched a later read, so opkit does not rely on it. Keep `host` alive and unchanged until
  // the stream has passed the copy (its synchronize, or an event recorded behind it).
  void copy_from(std::span<const Element> host, const Stream* stream = nullptr) const requires(!std::is_const_v<T>) {
    check_count(host.size(), "copy_from");
    device_.copy(data_, host.data(), host.size_bytes(), CopyKind::host_to_device, stream);
  }
  void copy_to(std::span<Element> host, const Stream* stream = nullptr) const {
    check_count(host.size(), "copy_to");
    device_.copy(host.data(), data_, host.size_bytes(), CopyKind::device_to_host, stream);
  }
  void copy_from(const BufferView<const Element>& other, const Stream* stream = nullptr) const
      requires(!std::is_const_v<T>) {
    check_count(other.size(), "copy_from");
    device_.copy(data_, other.data(), other.bytes(), CopyKind::device_to_device, stream);
  }
  std::vector<Element> to_host() const {
    std::vector<Element> host(size_);
    copy_to(std::span<Element>(host));
    return host;
  }
  // Sets every element to value.
  void fill(const Element& value, const Stream* stream = nullptr) const requires(!std::is_const_v<T>) {
    if constexpr (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4) {
      std::uint32_t pattern = 0;
      std::memcpy(&pattern, &value, sizeof(T));
      device_.fill(data_, pattern, sizeof(T), size_, stream);
    } else {
      std::vector<Element> host(size_, value);
      device_.copy(data_, host.data(), bytes(), CopyKind::host_to_device, nullptr);
    }
  }

  operator BufferView<const T>() const  // NOLINT(google-explicit-constructor): T* -> const T*
      requires(!std::is_const_v<T>) {
    return BufferView<const T>(device_, data_, size_);
  }

 private:
  void check_count(std::size_t count, const char* what) const {
    if (count != size_)
      throw Error(
          Errc::invalid_argument, std::string("BufferView::") + what,
          "size mismatch: buffer holds " + std::to_string(size_) + " elements, other side " + std::to_string(count));
  }

  Device device_;
  T* data_;
  std::size_t size_;
};

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer(Device device, std::size_t size)
      : device_(std::move(device)), data_(static_cast<T*>(device_.allocate(size * sizeof(T)))), size_(size) {}
  // Stream-ordered (Device::alloc(count, stream)): allocated and freed on `stream`.
  DeviceBuffer(Device device, std::size_t size, const Stream& stream)
      : device_(std::move(device)),
        free_on_(std::make_unique<const Stream>(stream)),
        data_(static_cast<T*>(device_.allocate(size * sizeof(T), stream))),
        size_(size) {}
  ~DeviceBuffer() { reset(); }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  // The device is copied, not moved: the moved-from buffer stays an empty buffer on that device.
  // NOLINTBEGIN(performance-move-constructor-init)
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : device_(other.device_),
        free_on_(std::move(other.free_on_)),
        data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  // NOLINTEND(performance-move-constructor-init)
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      free_on_ = std::move(other.free_on_);
    }
    return *this;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  bool empty() const noexcept { return size_ == 0; }
  const Device& device() const noexcept { return device_; }

  BufferView<T> view() { return BufferView<T>(device_, data_, size_); }
  BufferView<const T> view() const { return BufferView<const T>(device_, data_, size_); }
  operator BufferView<T>() { return view(); }              // NOLINT(google-explicit-constructor)
  operator BufferView<const T>() const { return view(); }  // NOLINT(google-explicit-constructor)

  void copy_from(std::span<const T> host, const Stream* stream = nullptr) { view().copy_from(host, stream); }
  void copy_to(std::span<T> host, const Stream* stream = nullptr) const { view().copy_to(host, stream); }
  void copy_from(const BufferView<const T>& other, const Stream* stream = nullptr) { view().copy_from(other, stream); }
  std::vector<T> to_host() const { return view().to_host(); }
  void fill(const T& value, const Stream* stream = nullptr) { view().fill(value, stream); }
  // Keeps the first `count` elements (count <= size()) in the same allocation, which is freed
  // whole as before: for results whose final size is known only after the device wrote them.
  void truncate(std::size_t count) {
    if (count > size_)
      throw Error(Errc::invalid_argument, "DeviceBuffer::truncate",
                  "cannot grow a buffer of " + std::to_string(size_) + " elements to " + std::to_string(count));
    size_ = count;
  }

 private:
  void reset() noexcept {
    if (data_ != nullptr) {
      if (free_on_)
        device_.deallocate(data_, *free_on_);
      else
        device_.deallocate(data_);
    }
    data_ = nullptr;
    size_ = 0;
    free_on_.reset();
  }

  Device device_;
  std::unique_ptr<const Stream> free_on_;  // set for a stream-ordered buffer (before data_: made first)
  T* data_;
  std::size_t size_;
};

template <class T>
DeviceBuffer<T> Device::alloc(std::size_t count) const {
  return DeviceBuffer<T>(*this, count);
}
template <class T>
DeviceBuffer<T> Device::alloc(std::size_t count, const Stream& stream) const {
  return DeviceBuffer<T>(*this, count, stream);
}

// How a launch argument reaches the kernel: buffers and views become their device pointer.
template <class A>
struct LaunchArg {
  static const A& convert(const A& value) { return value; }
};
template <class T>
struct LaunchArg<DeviceBuffer<T>> {
  static T* convert(DeviceBuffer<T>& buffer) { return buffer.data(); }
  static const T* convert(const DeviceBuffer<T>& buffer) { return buffer.data(); }
};
template <class T>
struct LaunchArg<BufferView<T>> {
  static T* convert(const BufferView<T>& view) { return view.data(); }
};

}  // namespace opkit
