// opkit::Device: backend selection, and the build path Program -> CompiledProgram -> Module
// with a bounded in-process cache (core/module_cache.hpp: same program, same device: compiled and
// loaded once) in front of the on-disk KernelCache.
#include "opkit/device.hpp"

#include "backend/backend.hpp"
#include "core/module_cache.hpp"
#include "opkit/cache.hpp"
#include "opkit/error.hpp"
#include "opkit/module.hpp"
#include "opkit/stream.hpp"

namespace opkit {

const char* backend_kind_name(BackendKind kind) noexcept {
  switch (kind) {
    case BackendKind::cuda:
      return "cuda";
    case BackendKind::cpu:
      return "cpu";
  }
  return "unknown";
}

Device::Device(std::shared_ptr<backend::Device> impl) : impl_(std::move(impl)) {
  if (!impl_) throw Error(Errc::invalid_argument, "Device", "null backend device");
}

Device Device::cuda(int ordinal) {
  auto& cuda = backend::cuda_backend();
  if (!cuda.available()) throw Error(Errc::unavailable, "CUDA backend", cuda.unavailable_reason());
  return Device(cuda.device(ordinal));
}

Device Device::cpu() {
  auto& cpu = backend::cpu_backend();
  if (!cpu.available()) throw Error(Errc::unavailable, "CPU backend", cpu.unavailable_reason());
  return Device(cpu.device(0));
}

std::vector<Device> Device::cuda_devices() {
  std::vector<Device> devices;
  auto& cuda = backend::cuda_backend();
  if (!cuda.available()) return devices;
  for (int i = 0; i < cuda.device_count(); ++i) devices.emplace_back(cuda.device(i));
  return devices;
}

Device Device::best() {
  if (backend::cuda_backend().available()) return cuda(0);
  return cpu();
}

std::vector<Device> Device::all() {
  std::vector<Device> devices = cuda_devices();
  if (backend::cpu_backend().available()) devices.push_back(cpu());
  return devices;
}

const DeviceInfo& Device::info() const {
  return impl_->info();
}

namespace {

// The disk cache's entry for `key`, or a fresh compile stored there.
CompiledProgram build_keyed(backend::Device& device, const ProgramSpec& spec, const std::string& key) {
  KernelCache& cache = KernelCache::global();
  if (auto hit = cache.load(key)) return *hit;
  CompiledProgram compiled = device.compile(spec);
  cache.store(key, compiled);  // a cache that cannot be written only costs time
  return compiled;
}

}  // namespace

CompiledProgram Device::build(const Program& program) const {
  return build_keyed(*impl_, program.spec(), KernelCache::key(program.spec(), impl_->compiler_identity()));
}

Module Device::load(const CompiledProgram& program) const {
  return Module(*this, impl_->load(program), std::make_shared<const CompiledProgram>(program));
}

Module Device::compile(const Program& program) const {
  const std::string key = KernelCache::key(program.spec(), impl_->compiler_identity());
  const detail::ModuleCache::Entry loaded =
      detail::ModuleCache::global().get_or_load(impl_, key, [&] { return build_keyed(*impl_, program.spec(), key); });
  return Module(*this, loaded.module, loaded.program);
}

Stream Device::default_stream() const {
  return Stream(*this, impl_->default_stream());
}
Stream Device::create_stream() const {
  return Stream(*this, impl_->create_stream());
}
Stream Device::borrow_stream(void* native_handle) const {
  return Stream(*this, impl_->borrow_stream(native_handle));
}
Event Device::create_event() const {
  return Event(*this, impl_->create_event());
}
void Device::synchronize() const {
  impl_->synchronize();
}
bool Device::supports(std::string_view op) const {
  return impl_->supports(op);
}
std::size_t Device::free_memory() const {
  return impl_->free_memory();
}

void* Device::allocate(std::size_t bytes) const {
  return impl_->allocate(bytes);
}
void Device::deallocate(void* ptr) const noexcept {
  impl_->deallocate(ptr);
}

void Device::copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, const Stream* stream) const {
  impl_->copy(dst, src, bytes, kind, stream != nullptr ? &stream->impl() : nullptr);
}

void Device::fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
                  const Stream* stream) const {
  impl_->fill(dst, pattern, pattern_bytes, count, stream != nullptr ? &stream->impl() : nullptr);
}

}  // namespace opkit
