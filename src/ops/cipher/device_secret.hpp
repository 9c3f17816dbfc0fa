// Per-call device memory of the cipher calls. It is stream-ordered on the call's stream (the
// device's default stream when the caller names none): allocated, used, wiped and freed there, so
// that a call makes no wait for the GPU that its results do not need. A call given a stream
// returns with its work queued on it; a call without one waits for its work before it returns.
//
// DeviceSecret is such memory holding key material (keys, IVs, Poly1305 keys, key schedules): it
// is zeroed by work queued on the stream behind the kernels that read it, then freed behind that,
// whether the call succeeded or threw. Nothing else can be given that memory before the zeroing
// has run.
#pragma once

#include <openssl/crypto.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cipher_kernels.hpp"
#include "host_bytes_in_flight.hpp"
#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {

// The stream a call's work goes to.
inline Stream call_stream(const Device& device, const Stream* stream) {
  return stream != nullptr ? *stream : device.default_stream();
}

// Waits for the work queued on `stream` (nullptr: the device's default stream); then the host
// bytes its copies read are wiped and freed.
inline void synchronize(const Device& device, const Stream* stream) {
  call_stream(device, stream).synchronize();
  release_copied();
}

// The end of a call whose results stay on the device: with a stream the work stays queued (the
// caller orders what follows on it); without one the call waits, as a synchronous call does.
inline void finish_call(const Device& device, const Stream* stream) {
  if (stream == nullptr) synchronize(device, nullptr);
}

// Scratch of `count` elements (at least one, so that empty views have a home) on the call's stream.
template <class T>
DeviceBuffer<T> call_scratch(const Device& device, std::size_t count, const Stream* stream) {
  return device.alloc<T>(std::max<std::size_t>(count, 1), call_stream(device, stream));
}

// Host elements (bytes, offset tables) copied into call scratch of their own; the caller's memory
// is free once this returns (the copy reads a parked copy of its own: host_bytes_in_flight.hpp).
template <class T>
DeviceBuffer<T> upload_scratch(const Device& device, std::span<const T> host, const Stream* stream) {
  DeviceBuffer<T> buffer = call_scratch<T>(device, host.size(), stream);
  if (!host.empty()) upload_in_flight(buffer.view().subview(0, host.size()), host, device, call_stream(device, stream));
  return buffer;
}

class DeviceSecret {
 public:
  // The longest run that upload() writes through the secret_store kernel's parameter
  // (SECRET_STORE_MAX_BYTES of kernels/secret_store.cu).
  static constexpr std::size_t parameter_bytes = 256;

  DeviceSecret(const Device& device, std::size_t bytes, const Stream* stream)
      : device_(device), buffer_(call_scratch<std::uint8_t>(device, bytes, stream)), size_(bytes), stream_(stream) {}
  ~DeviceSecret() {
    try {
      buffer_.fill(0, stream_);  // queued on the stream; without one, done before this returns
    } catch (...) {              // a faulted context: the memory goes with it
    }
  }
  DeviceSecret(const DeviceSecret&) = delete;
  DeviceSecret& operator=(const DeviceSecret&) = delete;

  std::uint8_t* data() noexcept { return buffer_.data(); }
  // The memory as an array of T (device allocations are aligned for any T).
  template <class T>
  T* as() noexcept {
    return reinterpret_cast<T*>(buffer_.data());
  }
  std::size_t size() const noexcept { return size_; }
  BufferView<const std::uint8_t> view() const { return buffer_.view().subview(0, size_); }

  // Copies the caller's `host` bytes to byte `at`; the caller's memory is free to change once this
  // returns. A run of at most parameter_bytes (every key, IV and ChaCha20 state of a bulk call)
  // travels as the parameter of the secret_store kernel: no host-to-device copy, so a bulk call
  // on a stream that a CUDA graph is capturing is captured whole (the graph holds the key, as it
  // must to replay the call). A longer run (a batch's keys) is copied from a parked copy of the
  // call's own, kept until the copy has run and then wiped (host_bytes_in_flight.hpp).
  void upload(std::span<const std::uint8_t> host, std::size_t at = 0) {
    if (host.empty()) return;
    if (host.size() <= parameter_bytes) return store_by_parameter(host, at);
    upload_in_flight(buffer_.view().subview(at, host.size()), host, device_, call_stream(device_, stream_));
  }
  // The caller's bytes copied as they are, without staging: only for a call that waits for its
  // work (the copy included) before it returns, so that the caller's memory is not read later.
  void upload_waited(std::span<const std::uint8_t> host, std::size_t at = 0) {
    if (host.empty()) return;
    if (host.size() <= parameter_bytes) return store_by_parameter(host, at);
    buffer_.view().subview(at, host.size()).copy_from(host, stream_);
  }
  // The caller's device bytes (on this secret's device) copied to byte `at`, queued on the stream:
  // no host copy and no wait. For device memory the kernels cannot read in place.
  void copy_on_device(BufferView<const std::uint8_t> from, std::size_t at = 0) {
    if (from.empty()) return;
    buffer_.view().subview(at, from.size()).copy_from(from, stream_);
  }

 private:
  void store_by_parameter(std::span<const std::uint8_t> host, std::size_t at) {
    struct Parameter {
      std::uint8_t bytes[parameter_bytes];
    } parameter{};
    std::copy(host.begin(), host.end(), parameter.bytes);
    std::uint8_t* dst = buffer_.view().subview(at, host.size()).data();  // bounds-checked, as a copy is
    auto count = static_cast<std::uint32_t>(host.size());
    void* args[] = {&dst, &parameter, &count};
    const std::size_t sizes[] = {sizeof dst, sizeof parameter, sizeof count};
    // launch_packed, not launch: launch would keep a second copy of the bytes that is not wiped.
    cipher_kernel(device_, {.source = CipherProgram::Source::secret_store}, "secret_store")
        .launch_packed({.grid = 1, .block = parameter_bytes, .stream = stream_}, args, sizes, 3);
    OPENSSL_cleanse(&parameter, sizeof parameter);
  }

  Device device_;
  DeviceBuffer<std::uint8_t> buffer_;
  std::size_t size_;
  const Stream* stream_;
};

}  // namespace opkit::ops::detail
