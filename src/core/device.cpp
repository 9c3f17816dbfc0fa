// opkit::Device: device names and enumeration over the backend registry, and the path
// Program -> CompiledProgram -> Module with a bounded in-process cache (core/module_cache.hpp:
// same program, same device: compiled and loaded once) in front of opkit::build and its on-disk
// KernelCache.
#include "opkit/device.hpp"

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>

#include "device_access.hpp"
#include "module_cache.hpp"
#include "opkit/backend.hpp"
#include "opkit/cache.hpp"
#include "opkit/error.hpp"
#include "opkit/module.hpp"
#include "opkit/registry.hpp"
#include "opkit/stream.hpp"
#include "opkit/target.hpp"
#include "registry_list.hpp"

namespace opkit {

Device::Device(std::shared_ptr<backend::Device> impl) : impl_(std::move(impl)) {
  if (!impl_) throw Error(Errc::invalid_argument, "Device", "null backend device");
}

namespace {

// "auto, cuda, cuda:N, cpu, cpu:N, ..." for the registered backends.
std::string vocabulary() {
  std::string words = "auto";
  for (const auto& b : detail::registered_backends()) words += ", " + b->name() + ", " + b->name() + ":N";
  return words;
}

Device device_of(backend::Backend& backend, int ordinal) {
  if (!backend.available()) throw Error(Errc::unavailable, backend.name() + " backend", backend.unavailable_reason());
  return Device(backend.device(ordinal));
}

}  // namespace

Device Device::parse(std::string_view spec) {
  if (spec == "auto") return best();
  const std::size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  int ordinal = 0;
  if (colon != std::string_view::npos) {
    const std::string_view digits = spec.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || ordinal < 0)
      throw Error(Errc::invalid_argument, "device",
                  "'" + std::string(spec) + "': the device number after ':' must be a whole number >= 0 (e.g. " +
                      std::string(name) + ":0)");
  }
  backend::Backend* backend = find_backend(name);
  if (backend == nullptr)
    throw Error(Errc::invalid_argument, "device",
                "'" + std::string(spec) + "' is not a device; use one of: " + vocabulary());
  return device_of(*backend, ordinal);
}

Device Device::cuda(int ordinal) {
  return parse("cuda:" + std::to_string(ordinal));
}

Device Device::cpu() {
  return parse("cpu");
}

std::vector<Device> Device::all(std::string_view backend_name) {
  backend::Backend* backend = find_backend(backend_name);
  if (backend == nullptr)
    throw Error(Errc::invalid_argument, "Device::all",
                "no backend named '" + std::string(backend_name) + "' (registered: " + backend_names() + ")");
  std::vector<Device> devices;
  if (!backend->available()) return devices;
  for (int i = 0; i < backend->device_count(); ++i) devices.emplace_back(backend->device(i));
  return devices;
}

std::vector<Device> Device::all() {
  std::vector<Device> devices;
  for (bool gpus : {true, false})
    for (const auto& b : detail::registered_backends())
      if (b->is_gpu() == gpus && b->available())
        for (int i = 0; i < b->device_count(); ++i) devices.emplace_back(b->device(i));
  return devices;
}

Device Device::best() {
  std::vector<Device> devices = all();
  if (!devices.empty()) return devices.front();
  std::string why;
  for (const auto& status : backends()) why += (why.empty() ? "" : "; ") + status.name + ": " + status.reason;
  throw Error(Errc::unavailable, "Device::best",
              "no backend has a device (" + (why.empty() ? "none registered" : why) + ")");
}

const DeviceInfo& Device::info() const {
  return impl_->info();
}

bool Device::is_gpu() const {
  return impl_->backend().is_gpu();
}

std::string Device::id() const {
  return info().backend + ":" + std::to_string(info().ordinal);
}

Target Device::target() const {
  return {info().backend, info().arch};
}

CompiledProgram Device::build(const Program& program) const {
  return opkit::build(program, target()).program;
}

Module Device::load(const CompiledProgram& program) const {
  return Module(*this, impl_->load(program), std::make_shared<const CompiledProgram>(program));
}

Module Device::load_file(const std::string& path) const {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    throw Error(
        error || std::filesystem::exists(path, error) ? Errc::io : Errc::not_found, "Device::load_file",
        std::filesystem::exists(path, error) ? "'" + path + "' is not a regular file" : "no file '" + path + "'");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  std::vector<std::uint8_t> bytes(size > 0 ? static_cast<std::size_t>(size) : 0);
  if (size < 0 || !in.seekg(0) || !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw Error(Errc::io, "Device::load_file", "cannot read '" + path + "': " + std::generic_category().message(errno));
  return load_binary(std::move(bytes), std::filesystem::path(path).filename().string());
}

Module Device::load_binary(std::vector<std::uint8_t> bytes, const std::string& name) const {
  backend::Backend& backend = impl_->backend();
  std::optional<CompiledProgram> program = backend.recognize_binary(std::move(bytes), name);
  if (!program) {
    const std::string takes = backend.binary_files();
    throw Error(Errc::load, "Device::load_binary",
                "'" + name + "' is not a binary the " + backend.name() + " backend loads" +
                    (takes.empty() ? std::string(" (it loads no binary files: compile the source instead)")
                                   : " (it takes " + takes + ")"))
        .with_source_name(name);
  }
  return load(*program);
}

Module Device::compile(const Program& program) const {
  const Target target = this->target();
  const std::string key = cache_key(program, target);
  const detail::ModuleCache::Entry loaded =
      detail::ModuleCache::global().get_or_load(impl_, key, [&] { return opkit::build(program, target).program; });
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
std::size_t Device::free_memory() const {
  return impl_->free_memory();
}

void* Device::allocate(std::size_t bytes) const {
  return impl_->allocate(bytes);
}
void Device::deallocate(void* ptr) const noexcept {
  impl_->deallocate(ptr);
}
void* Device::allocate(std::size_t bytes, const Stream& stream) const {
  if (!(stream.device() == *this))
    throw Error(Errc::invalid_argument, "allocate",
                "a stream of " + stream.device().id() + " cannot order memory of " + id());
  return impl_->allocate_on(bytes, detail::DeviceAccess::impl(stream));
}
void Device::deallocate(void* ptr, const Stream& stream) const noexcept {
  impl_->deallocate_on(ptr, detail::DeviceAccess::impl(stream));
}

void* Device::allocate_pinned(std::size_t bytes) const {
  return impl_->allocate_pinned(bytes);
}
void Device::deallocate_pinned(void* ptr) const noexcept {
  impl_->deallocate_pinned(ptr);
}

void Device::copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, const Stream* stream) const {
  impl_->copy(dst, src, bytes, kind, stream != nullptr ? &detail::DeviceAccess::impl(*stream) : nullptr);
}

void Device::fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
                  const Stream* stream) const {
  impl_->fill(dst, pattern, pattern_bytes, count, stream != nullptr ? &detail::DeviceAccess::impl(*stream) : nullptr);
}

}  // namespace opkit
