// CudaDevice: context, memory, compilation and module loading for one GPU.
#include <chrono>
#include <cstring>
#include <thread>

#include "cubin_params.hpp"
#include "cuda_backend.hpp"
#include "opkit/interrupt.hpp"

namespace opkit::cuda {
namespace {

CUdeviceptr device_ptr(const void* p) {
  return reinterpret_cast<CUdeviceptr>(p);
}

bool is_kernel_fault(CUresult rc) {
  // Errors a running kernel leaves behind (sticky context errors).
  return rc == 700 /*ILLEGAL_ADDRESS*/ || rc == 701 /*LAUNCH_OUT_OF_RESOURCES*/ || rc == 702 /*LAUNCH_TIMEOUT*/ ||
         rc == 714 /*HARDWARE_STACK_ERROR*/ || rc == 715 /*ILLEGAL_INSTRUCTION*/ || rc == 716 /*MISALIGNED_ADDRESS*/ ||
         rc == 717 /*INVALID_ADDRESS_SPACE*/ || rc == 718 /*INVALID_PC*/ || rc == 719 /*LAUNCH_FAILED*/ ||
         rc == 710 /*ASSERT*/;
}

}  // namespace

void check(CUresult rc, const char* stage, Errc kind, const std::string& kernel) {
  if (rc == CUDA_SUCCESS) return;
  Error error = Error(kind, stage, cu_error_string(rc)).with_code(rc, cu_error_name(rc));
  if (!kernel.empty()) throw std::move(error).with_kernel(kernel);
  throw error;
}

CudaDevice::CudaDevice(backend::Backend& backend, const DriverApi& api, int ordinal) : backend_(backend), api_(api) {
  check(api_.cuDeviceGet(&device_, ordinal), "cuDeviceGet", Errc::unavailable);
  check(api_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain", Errc::unavailable);
  int major = 0, minor = 0, sms = 0, clock = 0, registers = 0;
  api_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_);
  api_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_);
  api_.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_);
  api_.cuDeviceGetAttribute(&clock, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device_);
  api_.cuDeviceGetAttribute(&registers, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, device_);
  char name[256] = {};
  api_.cuDeviceGetName(name, sizeof(name) - 1, device_);
  std::size_t memory = 0;
  api_.cuDeviceTotalMem(&memory, device_);
  int driver = 0;
  api_.cuDriverGetVersion(&driver);
  sm_ = major * 10 + minor;
  info_.backend = backend.name();
  info_.ordinal = ordinal;
  info_.name = name;
  info_.arch = "sm_" + std::to_string(sm_);
  info_.compute_units = sms;
  info_.compute_unit_name = "SMs";
  info_.registers_per_unit = registers > 0 ? registers : 65536;  // 64 Ki on every arch since Kepler
  info_.total_memory = memory;
  info_.clock_khz = clock;
  info_.driver = driver_version_name(driver);
  default_stream_ = std::make_shared<CudaStream>(*this, nullptr, nullptr, false);
}

CudaDevice::~CudaDevice() {
  // Allocations still outstanding keep the pool's memory until they are freed (cuMemPoolDestroy).
  if (pool_ != nullptr) api_.cuMemPoolDestroy(pool_);
  if (context_ != nullptr) api_.cuDevicePrimaryCtxRelease(device_);
}

std::shared_ptr<CudaDevice> CudaDevice::self() {
  return std::static_pointer_cast<CudaDevice>(shared_from_this());
}

void CudaDevice::make_current() {
  CUcontext current = nullptr;
  if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != context_)
    check(api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

void CudaDevice::make_current_for_release() noexcept {
  CUcontext current = nullptr;
  if (api_.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != context_) api_.cuCtxSetCurrent(context_);
}

void CudaDevice::check_async(CUresult rc, const char* stage) {
  if (rc == CUDA_SUCCESS) return;
  const std::string* last = last_launch_.load(std::memory_order_relaxed);
  if (is_kernel_fault(rc) && last != nullptr) {
    throw Error(Errc::launch, stage,
                cu_error_string(rc) + " (raised by kernel " + *last +
                    " or work queued after it; the CUDA context is now unusable, restart the process)")
        .with_code(rc, cu_error_name(rc))
        .with_kernel(*last);
  }
  check(rc, stage, rc == 2 /*OUT_OF_MEMORY*/ ? Errc::memory : Errc::runtime);
}

std::shared_ptr<backend::Module> CudaDevice::load(const CompiledProgram& program) {
  if (program.format != BinaryFormat::cubin && program.format != BinaryFormat::ptx)
    throw Error(Errc::load, "cuModuleLoadData",
                std::string("a ") + binary_format_name(program.format) + " binary cannot be loaded on a CUDA GPU")
        .with_source_name(program.source_name);
  make_current();
  std::vector<std::uint8_t> image = program.binary;
  if (program.format == BinaryFormat::ptx && (image.empty() || image.back() != 0)) image.push_back(0);
  CUmodule module = nullptr;
  CUresult rc = api_.cuModuleLoadData(&module, image.data());
  if (rc != CUDA_SUCCESS) {
    std::string hint;
    if (rc == 222 /*UNSUPPORTED_PTX_VERSION*/)
      hint =
          ": the driver is older than the NVRTC that made this PTX; update the driver, or use an NVRTC "
          "that knows " +
          info_.arch + " so opkit can load a cubin instead";
    else if (rc == 209 /*NO_BINARY_FOR_GPU*/ || rc == 218 /*INVALID_PTX*/)
      hint = ": the binary was built for " + program.target + ", this GPU is " + info_.arch;
    throw Error(Errc::load, "cuModuleLoadData", cu_error_string(rc) + hint)
        .with_code(rc, cu_error_name(rc))
        .with_source_name(program.source_name);
  }
  return std::make_shared<CudaModule>(self(), module,
                                      program.format == BinaryFormat::cubin
                                          ? cubin_param_sizes(program.binary)
                                          : std::map<std::string, std::vector<std::size_t>>{});
}

void CudaDevice::throw_out_of_memory(CUresult rc, std::size_t bytes, const char* stage) {
  std::size_t free = 0, total = 0;
  api_.cuMemGetInfo(&free, &total);
  throw Error(Errc::memory, stage,
              "out of device memory on " + info_.name + ": asked for " + std::to_string(bytes) + " bytes, " +
                  std::to_string(free) + " of " + std::to_string(total) + " free")
      .with_code(rc, cu_error_name(rc));
}

void* CudaDevice::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  make_current();
  CUdeviceptr ptr = 0;
  CUresult rc = api_.cuMemAlloc(&ptr, bytes);
  if (rc == 2 /*OUT_OF_MEMORY*/) throw_out_of_memory(rc, bytes, "cuMemAlloc");
  check_async(rc, "cuMemAlloc");
  return reinterpret_cast<void*>(ptr);  // NOLINT(performance-no-int-to-ptr): a CUdeviceptr is an address
}

CUmemoryPool CudaDevice::stream_ordered_pool() {
  std::call_once(pool_once_, [&] {
    const DriverApi& a = api_;
    if (a.cuMemPoolCreate == nullptr || a.cuMemPoolDestroy == nullptr || a.cuMemPoolSetAttribute == nullptr ||
        a.cuMemAllocFromPoolAsync == nullptr || a.cuMemFreeAsync == nullptr)
      return;
    int supported = 0;
    if (a.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, device_) != CUDA_SUCCESS ||
        supported == 0)
      return;
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = info_.ordinal;  // an ordinal, as CUmemLocation asks (a CUdevice is one in practice)
    CUmemoryPool pool = nullptr;
    if (a.cuMemPoolCreate(&pool, &props) != CUDA_SUCCESS) return;
    // Keep up to 64 MiB between synchronizations, so that the small per-call scratch of the
    // operators is reused instead of mapped again after every wait (the default keeps nothing).
    std::uint64_t keep = std::uint64_t{64} << 20;
    a.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
    pool_ = pool;
  });
  return pool_;
}

void* CudaDevice::allocate_on(std::size_t bytes, backend::Stream& stream) {
  if (bytes == 0) return nullptr;
  make_current();
  CUmemoryPool pool = stream_ordered_pool();
  if (pool == nullptr) return allocate(bytes);
  CUdeviceptr ptr = 0;
  CUresult rc = api_.cuMemAllocFromPoolAsync(&ptr, bytes, pool, static_cast<CudaStream&>(stream).handle());
  if (rc == 2 /*OUT_OF_MEMORY*/) throw_out_of_memory(rc, bytes, "cuMemAllocFromPoolAsync");
  check_async(rc, "cuMemAllocFromPoolAsync");
  return reinterpret_cast<void*>(ptr);  // NOLINT(performance-no-int-to-ptr): a CUdeviceptr is an address
}

void CudaDevice::deallocate_on(void* ptr, backend::Stream& stream) noexcept {
  if (ptr == nullptr) return;
  if (pool_ == nullptr) {  // allocate_on fell back to cuMemAlloc (the pool is decided before any allocation)
    backend::Device::deallocate_on(ptr, stream);
    return;
  }
  make_current_for_release();
  api_.cuMemFreeAsync(device_ptr(ptr), static_cast<CudaStream&>(stream).handle());  // a destructor ignores failures
}

void* CudaDevice::allocate_pinned(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  make_current();
  void* ptr = nullptr;
  const CUresult rc = api_.cuMemHostAlloc(&ptr, bytes, CU_MEMHOSTALLOC_PORTABLE);
  if (rc == 2 /*OUT_OF_MEMORY*/)
    throw Error(Errc::memory, "cuMemHostAlloc",
                "out of page-locked host memory: asked for " + std::to_string(bytes) + " bytes")
        .with_code(rc, cu_error_name(rc));
  check_async(rc, "cuMemHostAlloc");
  return ptr;
}

void CudaDevice::deallocate_pinned(void* ptr) noexcept {
  if (ptr == nullptr) return;
  make_current_for_release();
  api_.cuMemFreeHost(ptr);  // a destructor ignores failures
}

void CudaDevice::wait(const char* stage, const std::function<CUresult()>& query,
                      const std::function<CUresult()>& block) {
  if (!interrupt_check_installed()) return check_async(block(), stage);
  // Yield for the first 2 ms (a kernel of a few ms is seen within a microsecond or two of its end;
  // a 100 us sleep overshoots by up to ~150 us, which a per-call op pays every call), then sleep
  // 100 us between queries: a wait of minutes costs next to no CPU, and a Ctrl-C is seen within
  // kInterruptPollInterval.
  const auto start = std::chrono::steady_clock::now();
  const auto yield_until = start + std::chrono::milliseconds(2);
  auto next_check = start + kInterruptPollInterval;
  for (;;) {
    const CUresult rc = query();
    if (rc != CUDA_ERROR_NOT_READY) return check_async(rc, stage);
    if (std::chrono::steady_clock::now() >= next_check) {
      if (interrupt_requested())
        throw Error(Errc::interrupted, stage,
                    "interrupted while waiting for the GPU; the work already queued keeps running (a GPU kernel "
                    "cannot be stopped from the host), and the next wait for it waits again");
      next_check = std::chrono::steady_clock::now() + kInterruptPollInterval;
    }
    if (std::chrono::steady_clock::now() < yield_until)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void CudaDevice::deallocate(void* ptr) noexcept {
  if (ptr == nullptr) return;
  make_current_for_release();
  api_.cuMemFree(device_ptr(ptr));  // destructors ignore failures (e.g. after a kernel fault)
}

void CudaDevice::copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, backend::Stream* stream) {
  if (bytes == 0) return;
  make_current();
  if (stream == nullptr) {
    // A synchronous copy first waits for the work before it on the default stream: that wait (a
    // kernel that runs for minutes) is the one to make interruptible.
    if (interrupt_check_installed()) synchronize_default_stream();
    switch (kind) {
      case CopyKind::host_to_device:
        return check_async(api_.cuMemcpyHtoD(device_ptr(dst), src, bytes), "cuMemcpyHtoD");
      case CopyKind::device_to_host:
        return check_async(api_.cuMemcpyDtoH(dst, device_ptr(src), bytes), "cuMemcpyDtoH");
      case CopyKind::device_to_device:
        check_async(api_.cuMemcpyDtoD(device_ptr(dst), device_ptr(src), bytes), "cuMemcpyDtoD");
        return synchronize_default_stream();
    }
  }
  CUstream s = static_cast<CudaStream*>(stream)->handle();
  switch (kind) {
    case CopyKind::host_to_device:
      return check_async(api_.cuMemcpyHtoDAsync(device_ptr(dst), src, bytes, s), "cuMemcpyHtoDAsync");
    case CopyKind::device_to_host:
      return check_async(api_.cuMemcpyDtoHAsync(dst, device_ptr(src), bytes, s), "cuMemcpyDtoHAsync");
    case CopyKind::device_to_device:
      return check_async(api_.cuMemcpyDtoDAsync(device_ptr(dst), device_ptr(src), bytes, s), "cuMemcpyDtoDAsync");
  }
}

void CudaDevice::fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
                      backend::Stream* stream) {
  if (count == 0) return;
  make_current();
  CUstream s = stream != nullptr ? static_cast<CudaStream*>(stream)->handle() : nullptr;
  CUdeviceptr p = device_ptr(dst);
  switch (pattern_bytes) {
    case 1:
      check_async(api_.cuMemsetD8Async(p, static_cast<unsigned char>(pattern), count, s), "cuMemsetD8Async");
      break;
    case 2:
      check_async(api_.cuMemsetD16Async(p, static_cast<unsigned short>(pattern), count, s), "cuMemsetD16Async");
      break;
    case 4:
      check_async(api_.cuMemsetD32Async(p, pattern, count, s), "cuMemsetD32Async");
      break;
    default:
      throw Error(Errc::invalid_argument, "fill", "pattern size must be 1, 2 or 4 bytes");
  }
  if (stream == nullptr) synchronize_default_stream();
}

void CudaDevice::synchronize_default_stream() {
  wait(
      "cuStreamSynchronize", [&] { return api_.cuStreamQuery(nullptr); },
      [&] { return api_.cuStreamSynchronize(nullptr); });
}

std::size_t CudaDevice::free_memory() {
  make_current();
  std::size_t free = 0, total = 0;
  check(api_.cuMemGetInfo(&free, &total), "cuMemGetInfo");
  return free;
}

std::shared_ptr<backend::Stream> CudaDevice::default_stream() {
  return default_stream_;
}

std::shared_ptr<backend::Stream> CudaDevice::create_stream() {
  make_current();
  CUstream stream = nullptr;
  check(api_.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return std::make_shared<CudaStream>(*this, self(), stream, true);
}

std::shared_ptr<backend::Stream> CudaDevice::borrow_stream(void* native_handle) {
  return std::make_shared<CudaStream>(*this, self(), static_cast<CUstream>(native_handle), false);
}

std::shared_ptr<backend::Event> CudaDevice::create_event() {
  return std::make_shared<CudaEvent>(self());
}

void CudaDevice::synchronize() {
  make_current();
  // There is no context-wide query: the default stream (where work goes unless the caller names
  // a stream) is waited for interruptibly, then the context. Work stuck on another stream is
  // interruptible through that stream's synchronize().
  if (interrupt_check_installed()) synchronize_default_stream();
  check_async(api_.cuCtxSynchronize(), "cuCtxSynchronize");
}

}  // namespace opkit::cuda
