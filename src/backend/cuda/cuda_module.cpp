// CUDA modules and functions: lookup, attributes, parameter layout and the launch itself.
#include <algorithm>
#include <set>

#include "cuda_backend.hpp"

namespace opkit::cuda {
namespace {

// Symbol names live for the whole process, so the device can point at the last one launched.
// The table is never destroyed: kernels may still be looked up by other threads during exit.
const std::string* intern(const std::string& symbol) {
  static auto* mutex = new std::mutex;
  static auto* names = new std::set<std::string>;
  std::lock_guard lock(*mutex);
  return &*names->insert(symbol).first;
}

}  // namespace

CudaModule::CudaModule(std::shared_ptr<CudaDevice> device, CUmodule module,
                       std::map<std::string, std::vector<std::size_t>> param_sizes)
    : device_(std::move(device)), module_(module), param_sizes_(std::move(param_sizes)) {}

const std::vector<std::size_t>* CudaModule::recorded_params(const std::string& symbol) const {
  auto it = param_sizes_.find(symbol);
  return it == param_sizes_.end() ? nullptr : &it->second;
}

CudaModule::~CudaModule() {
  if (module_ != nullptr) device_->api().cuModuleUnload(module_);
}

std::shared_ptr<backend::Function> CudaModule::function(const std::string& symbol) {
  device_->make_current();
  CUfunction function = nullptr;
  CUresult rc = device_->api().cuModuleGetFunction(&function, module_, symbol.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND) return nullptr;
  check(rc, "cuModuleGetFunction", Errc::load, symbol);
  return std::make_shared<CudaFunction>(shared_from_this(), function, symbol);
}

std::optional<GlobalVariable> CudaModule::global(const std::string& symbol) {
  device_->make_current();
  CUdeviceptr address = 0;
  std::size_t bytes = 0;
  CUresult rc = device_->api().cuModuleGetGlobal(&address, &bytes, module_, symbol.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND) return std::nullopt;
  check(rc, "cuModuleGetGlobal", Errc::load);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a CUdeviceptr is an address
  return GlobalVariable{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), bytes};
}

CudaFunction::CudaFunction(std::shared_ptr<CudaModule> module, CUfunction function, const std::string& symbol)
    : module_(std::move(module)), function_(function), symbol_(intern(symbol)) {}

void CudaFunction::launch(const LaunchConfig& config, backend::Stream& stream, void** args, const std::size_t*,
                          std::size_t) {
  CudaDevice& device = module_->device();
  device.make_current();
  const int shared_bytes = static_cast<int>(config.shared_bytes);
  if (shared_bytes > dynamic_shared_limit_.load(std::memory_order_acquire)) {
    // Above 48 KiB a kernel must opt in to more dynamic shared memory.
    std::lock_guard lock(shared_limit_mutex_);
    if (shared_bytes > dynamic_shared_limit_.load(std::memory_order_relaxed)) {
      check(device.api().cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", Errc::launch, *symbol_);
      dynamic_shared_limit_.store(shared_bytes, std::memory_order_release);
    }
  }
  CUresult rc = device.api().cuLaunchKernel(function_, config.grid.x, config.grid.y, config.grid.z, config.block.x,
                                            config.block.y, config.block.z, config.shared_bytes,
                                            static_cast<CudaStream&>(stream).handle(), args, nullptr);
  if (rc != CUDA_SUCCESS) {
    auto dims = [](const Dim3& d) {
      return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
    };
    throw Error(Errc::launch, "cuLaunchKernel",
                cu_error_string(rc) + " (grid " + dims(config.grid) + ", block " + dims(config.block) + ", " +
                    std::to_string(config.shared_bytes) + " bytes of dynamic shared memory)")
        .with_code(rc, cu_error_name(rc))
        .with_kernel(*symbol_);
  }
  device.note_launch(symbol_);
}

KernelAttributes CudaFunction::attributes() {
  const DriverApi& api = module_->device().api();
  KernelAttributes a;
  api.cuFuncGetAttribute(&a.max_threads_per_block, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function_);
  api.cuFuncGetAttribute(&a.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function_);
  api.cuFuncGetAttribute(&a.static_shared_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function_);
  api.cuFuncGetAttribute(&a.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function_);
  return a;
}

// A hint, so nothing here throws: a driver or GPU without the attribute (or the split) keeps its
// own carve-out.
void CudaFunction::carve_shared_memory_for(unsigned blocks_per_unit) {
  CudaDevice& device = module_->device();
  device.make_current();
  const DriverApi& api = device.api();
  int per_sm = 0, reserved = 0, own = 0;
  if (api.cuDeviceGetAttribute(&per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, device.handle()) !=
          CUDA_SUCCESS ||
      per_sm <= 0 || api.cuFuncGetAttribute(&own, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function_) != CUDA_SUCCESS)
    return;
  if (api.cuDeviceGetAttribute(&reserved, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, device.handle()) !=
      CUDA_SUCCESS)
    reserved = 0;
  // Percent of the most an SM's shared memory can be, rounded up (the driver rounds up again, to
  // a size the GPU has).
  const long long wanted = static_cast<long long>(blocks_per_unit) * (own + reserved);
  const int percent = static_cast<int>(std::min<long long>(100, (100 * wanted + per_sm - 1) / per_sm));
  api.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, percent);
}

backend::ParamInfo CudaFunction::params() {
  std::call_once(params_once_, [this] {
    // The cubin's own records first; else a driver that can count. Never probe past the last
    // parameter: that is an API error that compute-sanitizer reports (cubin_params.hpp).
    if (const auto* recorded = module_->recorded_params(*symbol_)) {
      params_ = {true, *recorded};
      return;
    }
    const DriverApi& api = module_->device().api();
    std::size_t count = 0;
    if (api.cuFuncGetParamCount == nullptr || api.cuFuncGetParamInfo == nullptr ||
        api.cuFuncGetParamCount(function_, &count) != CUDA_SUCCESS)
      return;  // unknown: launches go unchecked, as before CUDA 12.4
    for (std::size_t i = 0; i < count; ++i) {
      std::size_t offset = 0, size = 0;
      if (api.cuFuncGetParamInfo(function_, i, &offset, &size) != CUDA_SUCCESS) return;
      params_.sizes.push_back(size);
    }
    params_.known = true;
  });
  return params_;
}

}  // namespace opkit::cuda
