// CpuDevice (see cpu_device.hpp).
#include "cpu_device.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cpu_module.hpp"
#include "cpu_stream.hpp"
#include "host_compiler.hpp"
#include "host_info.hpp"
#include "kernel_compiler.hpp"
#include "opkit/error.hpp"
#include "worker_pool.hpp"

namespace opkit::cpu {
namespace {

constexpr std::size_t kAllocationAlignment = 256;

std::string compiler_or_reason() {
  try {
    return host_compiler().description();
  } catch (const Error& e) {
    return "no host compiler: " + e.message();
  }
}

}  // namespace

CpuDevice::CpuDevice(backend::Backend& backend, unsigned workers)
    : backend_(backend), workers_(workers), default_stream_(std::make_shared<CpuStream>(nullptr)) {
  info_.backend = backend.name();
  info_.ordinal = 0;
  const unsigned threads = hardware_threads();
  info_.compute_units = static_cast<int>(workers == 0 ? threads : std::min(workers, threads));
  info_.name = cpu_model_name() + " (" + std::to_string(info_.compute_units) + " threads)";
  info_.arch = host_arch();
  info_.total_memory = total_memory_bytes();
  info_.driver = compiler_or_reason();
}

std::shared_ptr<backend::Module> CpuDevice::load(const CompiledProgram& program) {
  return std::make_shared<CpuModule>(program, workers_);
}

void* CpuDevice::allocate(std::size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, kAllocationAlignment, bytes == 0 ? 1 : bytes) != 0 || p == nullptr)
    throw Error(Errc::memory, "CPU backend", "out of memory allocating " + std::to_string(bytes) + " bytes");
  return p;
}

void CpuDevice::deallocate(void* ptr) noexcept {
  std::free(ptr);
}

void CpuDevice::copy(void* dst, const void* src, std::size_t bytes, CopyKind, backend::Stream*) {
  if (bytes == 0) return;
  if (dst == nullptr || src == nullptr)
    throw Error(Errc::invalid_argument, "CPU backend",
                "copy of " + std::to_string(bytes) + " bytes with a null pointer");
  std::memmove(dst, src, bytes);
}

void CpuDevice::fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count, backend::Stream*) {
  if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4)
    throw Error(Errc::invalid_argument, "CPU backend",
                "fill pattern must be 1, 2 or 4 bytes, not " + std::to_string(pattern_bytes));
  if (count == 0) return;
  if (dst == nullptr) throw Error(Errc::invalid_argument, "CPU backend", "fill of a null pointer");
  if (pattern_bytes == 1) {
    std::memset(dst, static_cast<int>(pattern & 0xffu), count);
  } else if (pattern_bytes == 2) {
    auto value = static_cast<std::uint16_t>(pattern);
    auto* out = static_cast<unsigned char*>(dst);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(out + 2 * i, &value, 2);
  } else {
    auto* out = static_cast<unsigned char*>(dst);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(out + 4 * i, &pattern, 4);
  }
}

std::size_t CpuDevice::free_memory() {
  return available_memory_bytes();
}

std::shared_ptr<backend::Stream> CpuDevice::create_stream() {
  return std::make_shared<CpuStream>(CpuStream::own_handle);
}

std::shared_ptr<backend::Stream> CpuDevice::borrow_stream(void* native_handle) {
  return std::make_shared<CpuStream>(native_handle);
}

std::shared_ptr<backend::Event> CpuDevice::create_event() {
  return std::make_shared<CpuEvent>();
}

}  // namespace opkit::cpu
