// The "cpu-serial" backend (see cpu_serial.hpp): a Backend and a Device that delegate to a
// CPU-backend device limited to one launch thread, reporting their own name.
#include "cpu_serial.hpp"

#include <memory>
#include <mutex>
#include <string>

#include "../cpu_wrapper_backend.hpp"
#include "opkit/backend.hpp"
#include "opkit/cpu_backend.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"

namespace opkit::test {
namespace {

class SerialDevice final : public backend::Device {
 public:
  explicit SerialDevice(backend::Backend& owner) : owner_(owner), inner_(backend::make_cpu_device(1)) {
    info_ = inner_->info();
    info_.backend = owner.name();
    info_.name += " (blocks one at a time)";
  }

  backend::Backend& backend() const override { return owner_; }
  const DeviceInfo& info() const override { return info_; }

  std::shared_ptr<backend::Module> load(const CompiledProgram& program) override { return inner_->load(program); }

  void* allocate(std::size_t bytes) override { return inner_->allocate(bytes); }
  void deallocate(void* ptr) noexcept override { inner_->deallocate(ptr); }
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, backend::Stream* stream) override {
    inner_->copy(dst, src, bytes, kind, stream);
  }
  void fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
            backend::Stream* stream) override {
    inner_->fill(dst, pattern, pattern_bytes, count, stream);
  }
  std::size_t free_memory() override { return inner_->free_memory(); }

  std::shared_ptr<backend::Stream> default_stream() override { return inner_->default_stream(); }
  std::shared_ptr<backend::Stream> create_stream() override { return inner_->create_stream(); }
  std::shared_ptr<backend::Stream> borrow_stream(void* handle) override { return inner_->borrow_stream(handle); }
  std::shared_ptr<backend::Event> create_event() override { return inner_->create_event(); }
  void synchronize() override { inner_->synchronize(); }

 private:
  backend::Backend& owner_;
  std::shared_ptr<backend::Device> inner_;
  DeviceInfo info_;
};

}  // namespace

void register_cpu_serial_backend() {
  static std::once_flag once;
  std::call_once(once, [] { register_backend(std::make_shared<CpuWrapperBackend<SerialDevice>>("cpu-serial")); });
}

}  // namespace opkit::test
