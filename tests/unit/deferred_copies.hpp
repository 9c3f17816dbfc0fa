// A test device whose copies on a stream wait in a queue until something waits for them (the
// stream's synchronize, or an event recorded behind them): a copy reads its source then, not when
// it was queued, as a GPU's DMA may. Shared by the unit tests of what the cipher calls copy
// asynchronously (the pinned staging ring, the host bytes kept for queued copies).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "fake_backend.hpp"
#include "opkit/backend.hpp"
#include "opkit/device.hpp"

namespace opkit_test {

// A stream whose copies wait in a queue until synchronize() (or an event recorded behind them)
// runs them: a copy reads its source then, not when it was queued.
class DeferredStream final : public opkit::backend::Stream {
 public:
  struct Copy {
    void* dst;
    const void* src;
    std::size_t bytes;
  };
  void synchronize() override { run_to(queued_.size()); }
  void* native_handle() override { return this; }
  void queue(const Copy& copy) { queued_.push_back(copy); }
  std::size_t queued() const { return queued_.size(); }
  std::size_t done() const { return done_; }
  void run_to(std::size_t end) {
    for (; done_ < end; ++done_) std::memcpy(queued_[done_].dst, queued_[done_].src, queued_[done_].bytes);
  }

 private:
  std::vector<Copy> queued_;
  std::size_t done_ = 0;
};

class DeferredEvent final : public opkit::backend::Event {
 public:
  void record(opkit::backend::Stream& stream) override {
    stream_ = &static_cast<DeferredStream&>(stream);
    position_ = stream_->queued();
  }
  void synchronize() override {
    if (stream_ != nullptr) stream_->run_to(position_);
  }
  // Whether the copies before it have run, without running them (the default would wait).
  bool query() override { return stream_ == nullptr || stream_->done() >= position_; }
  float elapsed_ms_since(opkit::backend::Event&) override { return 0; }

 private:
  DeferredStream* stream_ = nullptr;
  std::size_t position_ = 0;
};

// Host memory for "device" and pinned memory alike; pinned allocations are counted and the last
// one remembered, so that a test can read what the ring left in its staging slots.
class DeferredDevice final : public opkit::backend::Device {
 public:
  opkit::backend::Backend& backend() const override { return opkit_test::FakeBackend::instance(); }
  const opkit::DeviceInfo& info() const override { return info_; }
  std::shared_ptr<opkit::backend::Module> load(const opkit::CompiledProgram&) override { return nullptr; }
  void* allocate(std::size_t bytes) override { return std::malloc(std::max<std::size_t>(bytes, 1)); }
  void deallocate(void* ptr) noexcept override { std::free(ptr); }
  void* allocate_pinned(std::size_t bytes) override {
    ++pinned_allocations;
    auto* memory = static_cast<std::uint8_t*>(std::calloc(bytes, 1));  // zero: what the ring leaves shows
    pinned = {memory, bytes};
    return memory;
  }
  void deallocate_pinned(void* ptr) noexcept override { std::free(ptr); }
  void copy(void* dst, const void* src, std::size_t bytes, opkit::CopyKind, opkit::backend::Stream* stream) override {
    if (bytes == 0) return;  // as the real backends: nothing to copy, and no pointer to read
    if (stream == nullptr) {
      std::memcpy(dst, src, bytes);
      return;
    }
    static_cast<DeferredStream*>(stream)->queue({dst, src, bytes});
  }
  void fill(void* dst, std::uint32_t pattern, std::size_t, std::size_t count, opkit::backend::Stream*) override {
    std::memset(dst, static_cast<int>(pattern), count);
  }
  std::size_t free_memory() override { return 0; }
  std::shared_ptr<opkit::backend::Stream> default_stream() override { return default_; }
  std::shared_ptr<opkit::backend::Stream> create_stream() override { return std::make_shared<DeferredStream>(); }
  std::shared_ptr<opkit::backend::Stream> borrow_stream(void*) override { return default_; }
  std::shared_ptr<opkit::backend::Event> create_event() override { return std::make_shared<DeferredEvent>(); }
  void synchronize() override { default_->synchronize(); }

  int pinned_allocations = 0;
  std::span<const std::uint8_t> pinned;

 private:
  opkit::DeviceInfo info_ = [] {
    opkit::DeviceInfo info;
    info.backend = "fake";
    info.name = "deferred copies";
    return info;
  }();
  std::shared_ptr<DeferredStream> default_ = std::make_shared<DeferredStream>();
};

struct Deferred {
  std::shared_ptr<DeferredDevice> impl = std::make_shared<DeferredDevice>();
  opkit::Device device{impl};
};

}  // namespace opkit_test
