// The CPU backend's one device: host memory, the host compiler, and launches on worker threads.
#pragma once

#include <memory>
#include <string>

#include "opkit/backend.hpp"

namespace opkit::cpu {

class CpuDevice final : public backend::Device {
 public:
  // Launches use at most `workers` threads of the pool (0: all of them).
  CpuDevice(backend::Backend& backend, unsigned workers);

  backend::Backend& backend() const override { return backend_; }
  const DeviceInfo& info() const override { return info_; }

  std::shared_ptr<backend::Module> load(const CompiledProgram& program) override;

  // 256-byte aligned host memory (cudaMalloc's alignment); zero bytes gives a unique pointer.
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr) noexcept override;
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, backend::Stream* stream) override;
  void fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
            backend::Stream* stream) override;
  std::size_t free_memory() override;

  std::shared_ptr<backend::Stream> default_stream() override { return default_stream_; }
  std::shared_ptr<backend::Stream> create_stream() override;
  std::shared_ptr<backend::Stream> borrow_stream(void* native_handle) override;
  std::shared_ptr<backend::Event> create_event() override;
  void synchronize() override {}

 private:
  backend::Backend& backend_;
  unsigned workers_;
  DeviceInfo info_;
  std::shared_ptr<backend::Stream> default_stream_;
};

}  // namespace opkit::cpu
