// The CUDA backend's classes: one primary context per GPU, cubins from NVRTC, the legacy default
// stream unless the caller brings its own.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend/backend.hpp"
#include "driver_api.hpp"
#include "opkit/error.hpp"

namespace opkit::cuda {

// Throws Error(kind, stage, ...) carrying the CUDA error name when rc is not CUDA_SUCCESS.
void check(CUresult rc, const char* stage, Errc kind = Errc::runtime, const std::string& kernel = {});

class CudaDevice;

class CudaStream final : public backend::Stream {
 public:
  // keep_alive is null only for the default stream, which the device itself owns.
  CudaStream(CudaDevice& device, std::shared_ptr<CudaDevice> keep_alive, CUstream stream, bool owned);
  ~CudaStream() override;
  void synchronize() override;
  void wait(backend::Event& event) override;
  bool query() override;
  void* native_handle() override { return stream_; }
  CUstream handle() const { return stream_; }

 private:
  CudaDevice& device_;
  std::shared_ptr<CudaDevice> keep_alive_;
  CUstream stream_;
  bool owned_;
};

class CudaEvent final : public backend::Event {
 public:
  explicit CudaEvent(std::shared_ptr<CudaDevice> device);
  ~CudaEvent() override;
  void record(backend::Stream& stream) override;
  void synchronize() override;
  float elapsed_ms_since(backend::Event& start) override;
  bool query() override;
  CUevent handle() const { return event_; }

 private:
  std::shared_ptr<CudaDevice> device_;
  CUevent event_ = nullptr;
};

class CudaModule;

class CudaFunction final : public backend::Function {
 public:
  CudaFunction(std::shared_ptr<CudaModule> module, CUfunction function, const std::string& symbol);
  void launch(const LaunchConfig& config, backend::Stream& stream, void** args, const std::size_t* sizes,
              std::size_t count) override;
  KernelAttributes attributes() override;
  backend::ParamInfo params() override;
  void carve_shared_memory_for(unsigned blocks_per_unit) override;

 private:
  std::shared_ptr<CudaModule> module_;
  CUfunction function_;
  const std::string* symbol_;  // interned: lives for the whole process
  std::once_flag params_once_;
  backend::ParamInfo params_;
  // Launch may run on several threads at once (a Kernel is shared): the limit is read without a
  // lock, and raised under shared_limit_mutex_ so that a smaller raise never undoes a larger one.
  std::atomic<int> dynamic_shared_limit_{48 * 1024};
  std::mutex shared_limit_mutex_;
};

class CudaModule final : public backend::Module, public std::enable_shared_from_this<CudaModule> {
 public:
  // param_sizes: each kernel's parameter sizes as the binary records them (cubin_params.hpp).
  CudaModule(std::shared_ptr<CudaDevice> device, CUmodule module,
             std::map<std::string, std::vector<std::size_t>> param_sizes = {});
  ~CudaModule() override;
  std::shared_ptr<backend::Function> function(const std::string& symbol) override;
  std::optional<GlobalVariable> global(const std::string& symbol) override;
  CudaDevice& device() { return *device_; }
  const std::vector<std::size_t>* recorded_params(const std::string& symbol) const;

 private:
  std::shared_ptr<CudaDevice> device_;
  CUmodule module_;
  std::map<std::string, std::vector<std::size_t>> param_sizes_;
};

class CudaDevice final : public backend::Device {
 public:
  CudaDevice(backend::Backend& backend, const DriverApi& api, int ordinal);
  ~CudaDevice() override;

  backend::Backend& backend() const override { return backend_; }
  const DeviceInfo& info() const override { return info_; }
  std::shared_ptr<backend::Module> load(const CompiledProgram& program) override;

  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr) noexcept override;
  // From this device's own memory pool (the driver's default pool is left to others); the plain
  // pair where the driver or the GPU has no pools.
  void* allocate_on(std::size_t bytes, backend::Stream& stream) override;
  void deallocate_on(void* ptr, backend::Stream& stream) noexcept override;
  // cuMemHostAlloc (portable: pinned for every context) / cuMemFreeHost.
  void* allocate_pinned(std::size_t bytes) override;
  void deallocate_pinned(void* ptr) noexcept override;
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, backend::Stream* stream) override;
  void fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
            backend::Stream* stream) override;
  std::size_t free_memory() override;

  std::shared_ptr<backend::Stream> default_stream() override;
  std::shared_ptr<backend::Stream> create_stream() override;
  std::shared_ptr<backend::Stream> borrow_stream(void* native_handle) override;
  std::shared_ptr<backend::Event> create_event() override;
  void synchronize() override;

  // Makes this device's primary context current on the calling thread (cheap when it already is).
  void make_current();
  const DriverApi& api() const { return api_; }
  int sm() const { return sm_; }
  CUdevice handle() const { return device_; }

  // Kernel faults surface at the next synchronizing call; remembering the last launch lets that
  // error name the kernel that most likely caused it.
  // `symbol` must outlive the device: CudaFunction interns its symbol for that reason.
  void note_launch(const std::string* symbol) { last_launch_.store(symbol, std::memory_order_relaxed); }
  // Like check(), but names the most recently launched kernel for errors that kernels cause.
  void check_async(CUresult rc, const char* stage);
  // A synchronizing wait that answers the thread's InterruptCheck (opkit/interrupt.hpp): with one,
  // `query` (cuStreamQuery, cuEventQuery) is polled until it stops saying CUDA_ERROR_NOT_READY,
  // the check every kInterruptPollInterval, and a stop throws Error(Errc::interrupted); without
  // one, `block` (the driver's own blocking wait) is called. Errors go through check_async.
  void wait(const char* stage, const std::function<CUresult()>& query, const std::function<CUresult()>& block);
  void synchronize_default_stream();

 private:
  std::shared_ptr<CudaDevice> self();
  // make_current for frees in destructors: a failure is ignored (the free then fails too, quietly).
  void make_current_for_release() noexcept;
  CUmemoryPool stream_ordered_pool();  // created on first use; nullptr without pool support
  [[noreturn]] void throw_out_of_memory(CUresult rc, std::size_t bytes, const char* stage);

  backend::Backend& backend_;
  const DriverApi& api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int sm_ = 0;
  DeviceInfo info_;
  std::atomic<const std::string*> last_launch_{nullptr};
  std::shared_ptr<CudaStream> default_stream_;
  std::once_flag pool_once_;
  CUmemoryPool pool_ = nullptr;
};

}  // namespace opkit::cuda
