// The CUDA backend entry: driver loading, GPU enumeration, one CudaDevice per GPU.
#include <mutex>
#include <vector>

#include "cuda_backend.hpp"

namespace opkit::cuda {
namespace {

class CudaBackend final : public backend::Backend {
 public:
  BackendKind kind() const override { return BackendKind::cuda; }

  bool available() override { return device_count() > 0; }

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
    if (!slot) slot = std::make_shared<CudaDevice>(*api, ordinal);
    return slot;
  }

 private:
  std::once_flag count_once_;
  int count_ = 0;
  std::mutex mutex_;
  std::vector<std::shared_ptr<CudaDevice>> devices_;
};

}  // namespace
}  // namespace opkit::cuda

namespace opkit::backend {

Backend& cuda_backend() {
  // Never destroyed: releasing contexts during static destruction races the driver's own teardown.
  static auto* backend = new cuda::CudaBackend();
  return *backend;
}

}  // namespace opkit::backend
