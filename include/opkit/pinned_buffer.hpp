// PinnedBuffer<T>: page-locked ("pinned") host memory of one device (Device::allocate_pinned),
// owned and move-only. A copy between it and the device on a stream is a DMA that runs while the
// host goes on; the host must not touch the memory again until that copy has run (wait for an
// event recorded behind it). Pinning is slow: keep such buffers and reuse them.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#include "opkit/device.hpp"

namespace opkit {

template <class T>
class PinnedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "pinned buffers hold trivially copyable elements");

 public:
  PinnedBuffer(Device device, std::size_t size)
      : device_(std::move(device)), data_(static_cast<T*>(device_.allocate_pinned(size * sizeof(T)))), size_(size) {}
  ~PinnedBuffer() { device_.deallocate_pinned(data_); }

  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  // The device is copied, not moved: the moved-from buffer stays an empty buffer of that device.
  // NOLINTBEGIN(performance-move-constructor-init)
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : device_(other.device_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  // NOLINTEND(performance-move-constructor-init)
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
      device_.deallocate_pinned(data_);
      device_ = other.device_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  const Device& device() const noexcept { return device_; }
  std::span<T> span() noexcept { return {data_, size_}; }
  std::span<const T> span() const noexcept { return {data_, size_}; }

 private:
  Device device_;
  T* data_;
  std::size_t size_;
};

}  // namespace opkit
