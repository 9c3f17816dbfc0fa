// Streams and events of the CPU backend. Work runs synchronously when it is issued (a launch
// returns when the grid is done), so a stream has nothing to wait for and an event is a time.
#pragma once

#include <chrono>

#include "backend/backend.hpp"

namespace opkit::cpu {

class CpuStream final : public backend::Stream {
 public:
  // A created stream's handle is its own address; the default stream's is nullptr; a borrowed
  // one keeps the value it was given.
  struct OwnHandle {};
  static constexpr OwnHandle own_handle{};
  explicit CpuStream(void* handle) : handle_(handle) {}
  explicit CpuStream(OwnHandle) : handle_(this) {}
  void synchronize() override {}
  void* native_handle() override { return handle_; }

 private:
  void* handle_;
};

class CpuEvent final : public backend::Event {
 public:
  void record(backend::Stream&) override;
  void synchronize() override {}
  float elapsed_ms_since(backend::Event& start) override;

 private:
  std::chrono::steady_clock::time_point time_{};
  bool recorded_ = false;
};

}  // namespace opkit::cpu
