// Loading kernel objects and launching their kernels (see cpu_module.hpp).
#include "cpu_module.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>

#include "block_runner.hpp"
#include "elf_symbols.hpp"
#include "kernel_compiler.hpp"
#include "opkit/error.hpp"
#include "static_shared.hpp"
#include "worker_pool.hpp"

namespace opkit::cpu {
namespace {

constexpr std::size_t kParamAlignment = 64;  // every argument is copied to storage this aligned

std::string dims(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

// CUDA's launch limits, so that a launch that works here also works on a GPU, failing as a GPU
// launch fails: a launch error (cuLaunchKernel's CUDA_ERROR_INVALID_VALUE), exit status 3.
void check_geometry(const LaunchConfig& config, const std::string& kernel, std::size_t static_shared) {
  auto invalid = [&](const std::string& message) {
    return Error(Errc::launch, "CPU kernel launch", message)
        .with_code(1, "CUDA_ERROR_INVALID_VALUE")
        .with_kernel(kernel);
  };
  if (config.grid.count() == 0 || config.block.count() == 0)
    throw invalid("grid " + dims(config.grid) + " and block " + dims(config.block) + " must not be empty");
  if (config.block.count() > 1024 || config.block.z > 64)
    throw invalid("block " + dims(config.block) + " exceeds CUDA's limits (1024 threads, z at most 64)");
  if (config.grid.x > 2147483647u || config.grid.y > 65535 || config.grid.z > 65535)
    throw invalid("grid " + dims(config.grid) + " exceeds CUDA's limits (x < 2^31, y and z at most 65535)");
  if (config.shared_bytes + static_shared > kMaxDynamicSharedBytes)
    throw invalid("dynamic shared memory of " + std::to_string(config.shared_bytes) + " bytes (and " +
                  std::to_string(static_shared) + " static) exceeds the " + std::to_string(kMaxDynamicSharedBytes) +
                  " bytes a block can have");
}

}  // namespace

CpuModule::CpuModule(const CompiledProgram& program, unsigned max_workers) : max_workers_(max_workers) {
  if (program.format != BinaryFormat::host_dso)
    throw Error(Errc::load, "CPU backend",
                std::string("a ") + binary_format_name(program.format) +
                    " cannot run on the CPU backend, which needs a host shared object")
        .with_source_name(program.source_name);
  const std::string arch = host_arch();
  if (program.target.substr(0, program.target.find('-')) != arch)
    throw Error(Errc::load, "CPU backend",
                "the kernel object was built for " + program.target + ", this machine is " + arch)
        .with_source_name(program.source_name);
  auto object = std::make_shared<const SharedObject>(program.binary);
  table_ = static_cast<const opkit_cpu_module*>(object->symbol(OPKIT_CPU_MODULE_SYMBOL));
  if (table_ == nullptr)
    throw Error(Errc::load, "CPU backend", "not an opkit CPU kernel object (no " OPKIT_CPU_MODULE_SYMBOL " table)")
        .with_source_name(program.source_name);
  if (table_->abi_version != OPKIT_CPU_ABI_VERSION)
    throw Error(Errc::load, "CPU backend",
                "kernel object of ABI version " + std::to_string(table_->abi_version) + ", this opkit needs " +
                    std::to_string(OPKIT_CPU_ABI_VERSION))
        .with_source_name(program.source_name);
  table_->bind(&BlockRunner::runtime());
  object_ = std::move(object);
  std::vector<std::string> kernels;
  for (std::uint32_t i = 0; i < table_->kernel_count; ++i) kernels.emplace_back(table_->kernels[i].name);
  static_shared_ = static_shared_bytes(program.binary, kernels);
  const std::uintptr_t base = object_->base();
  for_each_symbol(program.binary, [&](std::string_view name, const Elf64_Sym& symbol) {
    if (ELF64_ST_TYPE(symbol.st_info) != STT_OBJECT || symbol.st_shndx == SHN_UNDEF || name.empty()) return;
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the loaded object's base plus the symbol's offset is its address
    globals_[std::string(name)] = {reinterpret_cast<void*>(base + symbol.st_value), symbol.st_size};
  });
}

std::optional<GlobalVariable> CpuModule::global(const std::string& symbol) {
  auto it = globals_.find(symbol);
  if (it == globals_.end()) return std::nullopt;
  return it->second;
}

std::shared_ptr<backend::Function> CpuModule::function(const std::string& symbol) {
  for (std::uint32_t i = 0; i < table_->kernel_count; ++i)
    if (symbol == table_->kernels[i].name)
      return std::make_shared<CpuFunction>(object_, table_, &table_->kernels[i], max_workers_,
                                           static_shared_.count(symbol) != 0 ? static_shared_.at(symbol) : 0);
  return nullptr;
}

CpuFunction::CpuFunction(std::shared_ptr<const SharedObject> object, const opkit_cpu_module* table,
                         const opkit_cpu_kernel* kernel, unsigned max_workers, std::size_t static_shared_bytes)
    : object_(std::move(object)),
      table_(table),
      kernel_(kernel),
      max_workers_(max_workers),
      static_shared_bytes_(static_shared_bytes) {}

KernelAttributes CpuFunction::attributes() {
  KernelAttributes a;
  a.max_threads_per_block = 1024;
  a.static_shared_bytes = static_cast<int>(static_shared_bytes_);
  return a;
}

backend::ParamInfo CpuFunction::params() {
  backend::ParamInfo info;
  info.known = true;
  info.sizes.assign(kernel_->param_sizes, kernel_->param_sizes + kernel_->param_count);
  return info;
}

void CpuFunction::launch(const LaunchConfig& config, backend::Stream&, void** args, const std::size_t* sizes,
                         std::size_t count) {
  const std::string name = kernel_->name;
  if (count != kernel_->param_count)
    throw Error(
        Errc::invalid_argument, "CPU kernel launch",
        "kernel takes " + std::to_string(kernel_->param_count) + " argument(s), " + std::to_string(count) + " given")
        .with_kernel(name);
  for (std::size_t i = 0; i < count; ++i)
    if (sizes[i] != kernel_->param_sizes[i])
      throw Error(Errc::invalid_argument, "CPU kernel launch",
                  "argument " + std::to_string(i) + " is " + std::to_string(sizes[i]) +
                      " bytes but the kernel's parameter is " + std::to_string(kernel_->param_sizes[i]) + " bytes")
          .with_kernel(name);
  check_geometry(config, name, static_shared_bytes_);

  // The caller's values may sit anywhere; the kernel reads them as their types.
  auto padded = [](std::size_t n) { return (n + kParamAlignment - 1) / kParamAlignment * kParamAlignment; };
  std::size_t total = kParamAlignment;
  for (std::size_t i = 0; i < count; ++i) total += padded(sizes[i]);
  std::vector<unsigned char> storage(total);
  auto base = reinterpret_cast<std::uintptr_t>(storage.data());
  unsigned char* cursor = storage.data() + ((kParamAlignment - base % kParamAlignment) % kParamAlignment);
  std::vector<void*> aligned(count + 1);
  for (std::size_t i = 0; i < count; ++i) {
    std::memcpy(cursor, args[i], sizes[i]);
    aligned[i] = cursor;
    cursor += padded(sizes[i]);
  }

  LaunchGeometry geometry;
  geometry.grid = {config.grid.x, config.grid.y, config.grid.z};
  geometry.block = {config.block.x, config.block.y, config.block.z};
  geometry.shared_bytes = config.shared_bytes;
  const std::uint64_t blocks = config.grid.count();
  WorkerPool& pool = WorkerPool::instance();
  const unsigned width = max_workers_ == 0 ? pool.size() : std::min(max_workers_, pool.size());
  const unsigned workers = static_cast<unsigned>(std::min<std::uint64_t>(width, blocks));
  // Blocks are handed out in chunks (fewer atomic operations for grids of tiny blocks), small
  // enough that every worker gets dozens of them to balance uneven blocks.
  const std::uint64_t chunk = std::max<std::uint64_t>(1, blocks / (std::uint64_t{workers} * 64));
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::atomic<bool> stopped{false};  // an interrupt: set by the pool, seen by every BlockRunner
  std::mutex fault_mutex;
  std::string fault;
  std::exception_ptr resource_error;  // a worker that could not run (no memory for a fiber)
  pool.run(
      workers,
      [&](BlockRunner& runner) {
        try {
          runner.begin(*table_, *kernel_, aligned.data(), geometry, *object_, stopped);
          while (!failed.load(std::memory_order_relaxed) && !stopped.load(std::memory_order_relaxed)) {
            std::uint64_t first = next.fetch_add(chunk, std::memory_order_relaxed);
            if (first >= blocks) return;
            std::uint64_t last = std::min(first + chunk, blocks);
            for (std::uint64_t b = first; b < last; ++b) {
              if (runner.run_block(b)) continue;
              if (stopped.load(std::memory_order_relaxed)) return;
              std::lock_guard lock(fault_mutex);
              if (fault.empty() && !resource_error) fault = runner.fault();
              failed = true;
              return;
            }
          }
        } catch (...) {
          std::lock_guard lock(fault_mutex);
          if (fault.empty() && !resource_error) resource_error = std::current_exception();
          failed = true;
        }
      },
      [&] { stopped = true; });
  if (resource_error) std::rethrow_exception(resource_error);
  if (failed) throw Error(Errc::launch, "CPU kernel launch", "kernel faulted in " + fault).with_kernel(name);
  if (stopped)
    throw Error(Errc::interrupted, "CPU kernel launch",
                "interrupted: the kernel was stopped before its grid finished; its buffers hold what it wrote until "
                "then, and the device stays usable")
        .with_kernel(name);
}

}  // namespace opkit::cpu
