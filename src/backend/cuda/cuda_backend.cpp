// The CUDA backend entry: driver loading, GPU enumeration, one CudaDevice per GPU, and NVRTC
// compiles for a named arch (no GPU needed).
#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "cuda_backend.hpp"
#include "cuda_binary_file.hpp"
#include "nvrtc_api.hpp"
#include "nvrtc_compiler.hpp"
#include "opkit/target.hpp"

namespace opkit::cuda {
namespace {

// The driver's version, also when cuInit failed (the library is loaded, so ask it directly).
int driver_version(const DriverApi* api, const std::string& path) {
  int version = 0;
  if (api != nullptr) return api->cuDriverGetVersion(&version) == CUDA_SUCCESS ? version : 0;
  if (path.empty()) return 0;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  using GetVersion = int (*)(int*);
  if (auto get = reinterpret_cast<GetVersion>(::dlsym(handle, "cuDriverGetVersion"));
      get == nullptr || get(&version) != 0)
    version = 0;
  ::dlclose(handle);
  return version;
}

class CudaBackend final : public backend::Backend {
 public:
  std::string name() const override { return "cuda"; }
  bool is_gpu() const override { return true; }
  int dlpack_device_type() const override { return 2; }  // kDLCUDA
  std::string kernel_language() const override { return "cuda"; }

  CompiledProgram compile(const ProgramSpec& spec, const std::string& arch) override {
    const CudaArch target = parse(arch);
    return nvrtc_compile(spec, target.sm, target.ptx);
  }
  std::optional<CompiledProgram> recognize_binary(std::vector<std::uint8_t> bytes, const std::string& name) override {
    return recognize_cuda_binary(std::move(bytes), name);
  }
  std::string binary_files() const override { return "a cubin or PTX file"; }
  std::string compiler_identity(const std::string& arch) override {
    const CudaArch target = parse(arch);
    return nvrtc_identity(target.sm, target.ptx);
  }
  void load_compiler() noexcept override {
    try {
      std::string reason;
      if (nvrtc_api(&reason) != nullptr) nvrtc_warm_up();
    } catch (...) {  // the next compile reports it
    }
  }

  bool available() override { return device_count() > 0; }

  std::optional<backend::RuntimeDependency> runtime_dependency() override {
    backend::RuntimeDependency driver;
    driver.path = driver_library_path();
    const DriverApi* api = driver_api(&driver.reason);
    driver.usable = api != nullptr;
    driver.version = driver_version(api, driver.path);
    if (driver.usable) driver.reason.clear();
    driver.description = driver.usable ? driver_version_name(driver.version) + " (" + driver.path + ")"
                                       : "no usable CUDA driver: " + driver.reason;
    return driver;
  }

  std::string unavailable_reason() override {
    std::string reason;
    const DriverApi* api = driver_api(&reason);
    if (api == nullptr) return reason;
    return device_count() > 0 ? "" : "the CUDA driver loaded but reports no GPU";
  }

  int device_count() override {
    std::call_once(count_once_, [this] {
      const DriverApi* api = driver_api();
      int count = 0;
      if (api != nullptr && api->cuDeviceGetCount(&count) == CUDA_SUCCESS) count_ = count;
      // NVRTC is loaded with the driver, before any compile can start: a library first loaded by
      // a background compile would be torn down at exit before the compile queue joins it.
      if (count_ > 0) nvrtc_api();
      devices_.resize(static_cast<std::size_t>(count_));
    });
    return count_;
  }

  std::shared_ptr<backend::Device> device(int ordinal) override {
    std::string reason;
    const DriverApi* api = driver_api(&reason);
    if (api == nullptr) throw Error(Errc::unavailable, "CUDA backend", reason);
    if (ordinal < 0 || ordinal >= device_count())
      throw Error(
          Errc::unavailable, "CUDA backend",
          "no CUDA GPU with ordinal " + std::to_string(ordinal) + " (" + std::to_string(device_count()) + " visible)");
    std::lock_guard lock(mutex_);
    auto& slot = devices_[static_cast<std::size_t>(ordinal)];
    if (!slot) slot = std::make_shared<CudaDevice>(*this, *api, ordinal);
    return slot;
  }

 private:
  static CudaArch parse(const std::string& arch) {
    if (arch.empty())
      throw Error(Errc::invalid_argument, "CUDA backend",
                  "a CUDA target needs an arch: sm_90 for an H100/H200, sm_80 for an A100 (or compute_XX for PTX)");
    std::optional<CudaArch> parsed = parse_cuda_arch(arch);
    if (!parsed)
      throw Error(Errc::invalid_argument, "CUDA backend",
                  "'" + arch + "' is not a CUDA arch; write it as sm_90, compute_90 or 90");
    return *parsed;
  }

  std::once_flag count_once_;
  int count_ = 0;
  std::mutex mutex_;
  std::vector<std::shared_ptr<CudaDevice>> devices_;
};

}  // namespace
}  // namespace opkit::cuda

namespace opkit::backend {

// The registry never destroys it: releasing contexts during static destruction races the
// driver's own teardown.
std::shared_ptr<Backend> make_cuda_backend() {
  return std::make_shared<cuda::CudaBackend>();
}

}  // namespace opkit::backend
