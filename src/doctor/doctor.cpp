// The checks of `opkit doctor`: driver, NVRTC, each GPU and what NVRTC can build for it, a smoke
// compile + launch per device, the kernel cache, the CPU backend, and the classic CUDA set-up
// failures (several installs on the library path, a toolkit too old for the GPU, PyCUDA's header
// errors). Each check says what it found and, when something is wrong, why and what to do.
#include "opkit/doctor.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include "doctor_cxx_runtime.hpp"
#include "doctor_installs.hpp"
#include "opkit/backend.hpp"
#include "opkit/buffer.hpp"
#include "opkit/cache.hpp"
#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/kernel.hpp"
#include "opkit/module.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/program.hpp"
#include "opkit/registry.hpp"
#include "opkit/target.hpp"
#include "opkit/version.hpp"

namespace opkit::doctor {
namespace {

constexpr const char* kSmokeSource = R"(
__global__ void opkit_doctor_smoke(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = 2.0f * i;
}
)";

// What users of PyCUDA and nvcc meet, none of which opkit's NVRTC path can hit.
constexpr const char* kHeaderSource = R"(
#include <stdint.h>
#include <cstdint>
#include <stddef.h>
#include <string.h>
#include <limits.h>
#include <math.h>
extern "C" __global__ void opkit_doctor_headers(uint32_t* out, size_t n) {
  uint8_t bytes[4] = {1, 2, 3, 4};
  uint32_t word = 0;
  memcpy(&word, bytes, sizeof word);
  if (n > 0) out[0] = word + (uint32_t)sqrtf(16.0f) + (INT_MAX > 0);
}
)";

// The first CUDA release whose NVRTC emits a cubin for an arch, for "install CUDA >= X".
std::string first_cuda_with(int sm) {
  static const std::map<int, const char*> first = {
      {70, "9.0"},  {72, "10.0"},  {75, "10.0"},  {80, "11.0"},  {86, "11.1"},  {87, "11.4"},  {89, "11.8"},
      {90, "11.8"}, {100, "12.8"}, {101, "12.8"}, {103, "12.9"}, {110, "13.0"}, {120, "12.8"}, {121, "12.9"}};
  auto it = first.find(sm);
  return it != first.end() ? it->second : "a newer release";
}

std::string version_text(int driver_version) {
  return std::to_string(driver_version / 1000) + "." + std::to_string(driver_version % 1000 / 10);
}

std::string bytes_text(std::size_t bytes) {
  char text[32];
  if (bytes >= (std::size_t{1} << 30))
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  else if (bytes >= (std::size_t{1} << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  return text;
}

std::string arch_list(const std::vector<int>& archs) {
  std::string out;
  for (int a : archs) out += (out.empty() ? "sm_" : " sm_") + std::to_string(a);
  return out;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

Check make_check(std::string name, Status status = Status::ok, std::string detail = {}, std::string cause = {},
                 std::string fix = {}) {
  Check c;
  c.name = std::move(name);
  c.status = status;
  c.detail = std::move(detail);
  c.cause = std::move(cause);
  c.fix = std::move(fix);
  return c;
}
Check named(std::string name) {
  return make_check(std::move(name));
}

struct Context {
  Options options;
  Report report;
  std::optional<int> driver;  // driver API version, e.g. 13000
  bool driver_usable = false;
  nvrtc::Info nvrtc;
  std::vector<int> gpu_sms;  // sm of each GPU found

  Check& add(Check check) {
    report.checks.push_back(std::move(check));
    return report.checks.back();
  }
};

// The CUDA driver, as the CUDA backend found it (its runtime_dependency()).
void check_driver(Context& ctx) {
  backend::Backend* cuda = find_backend("cuda");
  const std::optional<backend::RuntimeDependency> driver =
      cuda != nullptr ? cuda->runtime_dependency() : std::optional<backend::RuntimeDependency>{};
  const std::string path = driver ? driver->path : std::string();
  const std::string reason = driver ? driver->reason : "this build of opkit has no CUDA backend";
  if (driver && driver->version != 0) ctx.driver = driver->version;
  ctx.driver_usable = driver && driver->usable;
  Check c = named("driver");
  if (!path.empty()) c.facts.emplace_back("path", path);
  if (ctx.driver) c.facts.emplace_back("version", version_text(*ctx.driver));
  if (ctx.driver_usable) {
    c.detail = path + ", CUDA " + version_text(ctx.driver.value_or(0));
  } else if (path.empty()) {
    c.status = Status::warn;
    c.detail = "no CUDA driver (libcuda.so.1): GPU checks skipped";
    c.cause = reason;
    c.fix =
        "for GPU work install the NVIDIA driver (its libcuda.so.1); without it opkit runs kernels on the CPU "
        "backend";
  } else {
    c.status = Status::warn;
    c.detail = path + (ctx.driver ? ", CUDA " + version_text(*ctx.driver) : std::string()) + ", but unusable";
    c.cause = reason;
    c.fix =
        "check that a GPU is visible to this process (nvidia-smi; in a container: --gpus all; "
        "CUDA_VISIBLE_DEVICES not empty) and that the kernel module matches the driver library";
  }
  ctx.add(std::move(c));
}

void check_nvrtc(Context& ctx) {
  ctx.nvrtc = nvrtc::info();
  Check c = named("nvrtc");
  const char* chosen = std::getenv("OPKIT_NVRTC");
  if (ctx.nvrtc.available) {
    std::string version = std::to_string(ctx.nvrtc.major) + "." + std::to_string(ctx.nvrtc.minor);
    c.detail = ctx.nvrtc.path + ", NVRTC " + version + ", cubins for " +
               (ctx.nvrtc.archs.empty() ? "any arch" : arch_list(ctx.nvrtc.archs));
    c.facts = {{"path", ctx.nvrtc.path}, {"version", version}, {"archs", arch_list(ctx.nvrtc.archs)}};
  } else {
    c.status = Status::fail;
    c.detail = "NVRTC not usable: GPU kernels cannot be compiled";
    c.cause = ctx.nvrtc.reason;
    c.fix = chosen != nullptr && *chosen
                ? "unset OPKIT_NVRTC, or point it at a real libnvrtc.so (e.g. /usr/local/cuda/lib64/libnvrtc.so.13)"
                : "install NVRTC: the CUDA toolkit, the distribution's libnvrtc package, or pip install "
                  "nvidia-cuda-nvrtc; or set OPKIT_NVRTC to its path";
  }
  ctx.add(std::move(c));
}

void check_driver_against_nvrtc(Context& ctx) {
  Check c = named("driver vs nvrtc");
  if (!ctx.driver || !ctx.nvrtc.available) {
    c.status = Status::skip;
    c.detail = "needs both the driver and NVRTC";
    ctx.add(std::move(c));
    return;
  }
  int nvrtc_version = ctx.nvrtc.major * 1000 + ctx.nvrtc.minor * 10;
  std::string d = version_text(*ctx.driver),
              n = std::to_string(ctx.nvrtc.major) + "." + std::to_string(ctx.nvrtc.minor);
  if (*ctx.driver >= nvrtc_version) {
    c.detail = "driver CUDA " + d + " >= NVRTC " + n;
  } else if (*ctx.driver / 1000 == ctx.nvrtc.major) {
    c.status = Status::warn;
    c.detail = "driver CUDA " + d + " is older than NVRTC " + n;
    c.cause =
        "PTX from this NVRTC would not JIT on this driver (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), the "
        "usual failure of runtime compilation; opkit loads cubins, which work within one major version";
    c.fix = "nothing, as long as NVRTC knows every GPU's arch (see the gpu checks); else update the driver";
  } else {
    c.status = Status::fail;
    c.detail = "driver CUDA " + d + " is a major version behind NVRTC " + n;
    c.cause = "this driver cannot load cubins or PTX made by NVRTC " + n;
    c.fix = "update the NVIDIA driver to one for CUDA " + std::to_string(ctx.nvrtc.major) +
            ", or set OPKIT_NVRTC to an NVRTC from CUDA " + std::to_string(*ctx.driver / 1000) + ".x";
  }
  ctx.add(std::move(c));
}

// What NVRTC makes for this GPU: a cubin, PTX for an older arch (JIT), or nothing.
void describe_target(Context& ctx, Check& c, int sm) {
  const auto& archs = ctx.nvrtc.archs;
  std::string arch = "sm_" + std::to_string(sm);
  if (!ctx.nvrtc.available) {
    c.detail += "; NVRTC missing, nothing can be compiled for it";
    c.status = Status::fail;
    c.cause = "NVRTC is not usable (see the nvrtc check)";
    c.fix = "install NVRTC or set OPKIT_NVRTC";
    return;
  }
  if (archs.empty() || std::find(archs.begin(), archs.end(), sm) != archs.end()) {
    c.detail += "; NVRTC builds a cubin for " + arch;
    c.facts.emplace_back("target", "cubin " + arch);
    return;
  }
  int below = 0;
  for (int a : archs)
    if (a <= sm) below = std::max(below, a);
  if (below == 0) {
    c.status = Status::fail;
    c.detail += "; NVRTC " + std::to_string(ctx.nvrtc.major) + " cannot target " + arch;
    c.cause = "this toolkit dropped " + arch + " (the oldest arch its NVRTC knows is sm_" +
              std::to_string(archs.front()) + ")";
    c.fix = "set OPKIT_NVRTC to the NVRTC of an older CUDA toolkit that still supports " + arch +
            " (CUDA 12.x for sm_50 to sm_72, CUDA 11.x for sm_35/sm_37)";
    c.facts.emplace_back("target", "none");
    return;
  }
  std::string ptx = "compute_" + std::to_string(below);
  c.facts.emplace_back("target", "PTX " + ptx);
  c.detail += "; NVRTC knows no cubin for " + arch + ", only PTX for " + ptx + " (JIT-compiled by the driver)";
  c.status = Status::warn;
  c.cause = "the toolkit is older than this GPU: NVRTC " + std::to_string(ctx.nvrtc.major) + "." +
            std::to_string(ctx.nvrtc.minor) + " predates " + arch + "; each first load JIT-compiles the PTX";
  c.fix = "install NVRTC from CUDA " + first_cuda_with(sm) + " or newer (or point OPKIT_NVRTC at it)";
  int nvrtc_version = ctx.nvrtc.major * 1000 + ctx.nvrtc.minor * 10;
  if (ctx.driver && *ctx.driver < nvrtc_version) {
    c.status = Status::fail;
    c.cause += "; and the driver is older than NVRTC, so that PTX will not load";
  }
}

void check_gpus(Context& ctx) {
  backend::Backend* cuda = find_backend("cuda");
  if (cuda == nullptr || !cuda->available()) {
    Check c = named("gpu");
    c.status = ctx.options.require_gpu ? Status::fail : Status::skip;
    c.detail = cuda == nullptr      ? "no CUDA GPU: this build of opkit has no CUDA backend"
               : !ctx.driver_usable ? "no CUDA GPU: the driver is not usable (see the driver check)"
                                    : "no CUDA GPU: " + cuda->unavailable_reason();
    if (ctx.options.require_gpu) {
      c.cause = "a GPU was required (--require-gpu)";
      c.fix = "run on a machine with an NVIDIA GPU and driver, or drop --require-gpu to use the CPU backend";
    }
    ctx.add(std::move(c));
    return;
  }
  for (int i = 0; i < cuda->device_count(); ++i) {
    Check c = named("gpu" + std::to_string(i));
    try {
      Device gpu = Device::cuda(i);
      const DeviceInfo& info = gpu.info();
      int sm = gpu.info().arch.size() > 3 ? std::atoi(info.arch.c_str() + 3) : 0;
      ctx.gpu_sms.push_back(sm);
      c.detail = info.name + ", " + info.arch + ", " + bytes_text(info.total_memory) + ", " +
                 std::to_string(info.compute_units) + " SMs";
      c.facts = {{"name", info.name},
                 {"arch", info.arch},
                 {"memory_bytes", std::to_string(info.total_memory)},
                 {"multiprocessors", std::to_string(info.compute_units)}};
      describe_target(ctx, c, sm);
    } catch (const Error& e) {
      c.status = Status::fail;
      c.detail = "cannot open GPU " + std::to_string(i);
      c.cause = first_line(e.what());
      c.fix = "check nvidia-smi for this GPU (in use by an exclusive process, fallen off the bus, ECC errors)";
    }
    ctx.add(std::move(c));
  }
}

// Compiles and launches the smoke kernel on `device`, checking the result against the CPU.
void smoke(Context& ctx, const Device& device, const std::string& label) {
  Check c = named("smoke " + label);
  auto start = std::chrono::steady_clock::now();
  try {
    constexpr int n = 256;
    Module module = device.compile(Program(kSmokeSource).name("opkit_doctor_smoke.cu"));
    auto out = device.alloc<float>(n);
    out.fill(-1.0f);
    module.kernel("opkit_doctor_smoke")
        .launch(LaunchConfig{.grid = 1, .block = n, .shared_bytes = 0, .stream = nullptr}, out, n);
    std::vector<float> host = out.to_host();
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += host[static_cast<std::size_t>(i)] != 2.0f * static_cast<float>(i);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    char took[32];
    std::snprintf(took, sizeof took, "%.0f ms", ms);
    if (wrong != 0) {
      c.status = Status::fail;
      c.detail = std::to_string(wrong) + " of " + std::to_string(n) + " results differ from the CPU reference";
      c.cause = "the kernel ran but computed wrong values: a driver or hardware fault";
      c.fix = "run nvidia-smi -q for ECC errors; update the driver";
    } else {
      c.detail = "compiled (" + binary_format_name(module.program().format) + " " + module.program().target +
                 "), launched, " + std::to_string(n) + " results match the CPU reference (" + took + ")";
      if (device.is_gpu())
        ++ctx.report.working_gpus;
      else
        ctx.report.cpu_backend_works = true;
    }
  } catch (const Error& e) {
    c.status = Status::fail;
    c.detail = std::string("failed at ") + e.stage() + ": " + e.message();
    c.cause = first_line(e.what());
    switch (e.kind()) {
      case Errc::unavailable:
      case Errc::compile:
        c.fix = device.is_gpu() ? "see the nvrtc check; the compile log is in `opkit compile` output"
                                : "see the cpu backend check (host compiler)";
        break;
      case Errc::load:
        c.fix = "the driver rejected the binary: update the driver, or use an NVRTC no newer than it (OPKIT_NVRTC)";
        break;
      default:
        c.fix = "check nvidia-smi; if the GPU is healthy, report this with the output of opkit doctor --json";
    }
  }
  ctx.add(std::move(c));
}

void check_smoke_gpus(Context& ctx) {
  backend::Backend* cuda = find_backend("cuda");
  if (cuda == nullptr || !cuda->available()) return;
  for (int i = 0; i < cuda->device_count(); ++i) {
    if (!ctx.options.smoke) {
      ctx.add(make_check("smoke cuda:" + std::to_string(i), Status::skip, "smoke test not asked for"));
      continue;
    }
    try {
      smoke(ctx, Device::cuda(i), "cuda:" + std::to_string(i));
    } catch (const Error& e) {
      ctx.add(make_check("smoke cuda:" + std::to_string(i), Status::fail, "cannot open the GPU", first_line(e.what()),
                         "see the gpu check"));
    }
  }
}

void check_headers(Context& ctx) {
  Check c = named("headers");
  if (!ctx.nvrtc.available) {
    c.status = Status::skip;
    c.detail = "needs NVRTC";
    ctx.add(std::move(c));
    return;
  }
  int sm = !ctx.gpu_sms.empty() ? ctx.gpu_sms.front() : (!ctx.nvrtc.archs.empty() ? ctx.nvrtc.archs.back() : 90);
  try {
    compile(Program(kHeaderSource).name("opkit_doctor_headers.cu"), Target::cuda("sm_" + std::to_string(sm)));
    c.detail =
        "NVRTC compiles #include <stdint.h>, <cstdint>, <string.h>, <math.h> through opkit's stand-ins; GPU code "
        "needs no nvcc and no host compiler, so PyCUDA's `cuda_runtime.h: No such file or directory`, "
        "`identifier \"_Float32\" is undefined` (gcc too new for nvcc) and NVRTC's `cannot open source file "
        "\"stdint.h\"` do not apply";
  } catch (const Error& e) {
    c.status = Status::fail;
    c.detail = "a kernel including standard headers does not compile";
    c.cause = first_line(e.what());
    c.fix =
        "this NVRTC rejects opkit's header stand-ins: try the NVRTC of another CUDA release (OPKIT_NVRTC) and "
        "report the log";
  }
  ctx.add(std::move(c));
}

void check_installs(Context& ctx) {
  Check c = named("cuda installs");
  auto copies = doctor::detail::visible_cuda_libraries();
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_library;  // library -> version -> paths
  for (const auto& copy : copies) by_library[copy.library][copy.version].push_back(copy.path);
  std::string found, several;
  for (const auto& [library, versions] : by_library) {
    std::string list;
    for (const auto& [version, paths] : versions) {
      list += (list.empty() ? "" : ", ") + version + " (" + paths.front() + (paths.size() > 1 ? ", ..." : "") + ")";
      c.facts.emplace_back(library, version + " " + paths.front());
    }
    found += (found.empty() ? "" : "; ") + library + " " + list;
    bool mixed = false;
    for (const auto& [a, a_paths] : versions)
      for (const auto& [b, b_paths] : versions) mixed = mixed || !doctor::detail::same_release(a, b);
    if (mixed) several += (several.empty() ? "" : "; ") + library + ": " + list;
  }
  c.detail = found.empty() ? "no libnvrtc / libcudart on the library path" : found;
  if (!several.empty()) {
    c.status = Status::warn;
    c.cause = "several CUDA releases are on the library path (" + several +
              "): which one a program gets depends on LD_LIBRARY_PATH order, the usual cause of \"works in one "
              "shell, not in another\" and of PyCUDA/CuPy picking a toolkit the driver or GPU does not support";
    c.fix = "keep one toolkit on LD_LIBRARY_PATH and in /etc/ld.so.conf.d; opkit itself uses " +
            (ctx.nvrtc.available ? ctx.nvrtc.path : std::string("the first libnvrtc it finds")) +
            " and can be pinned with OPKIT_NVRTC=/path/to/libnvrtc.so.N";
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* root = std::getenv(var);
    if (root == nullptr || !*root || !ctx.nvrtc.available) continue;
    std::string loaded = std::to_string(ctx.nvrtc.major) + "." + std::to_string(ctx.nvrtc.minor);
    for (const auto& copy : copies)
      if (copy.library == "libnvrtc" && copy.found_via == var && !doctor::detail::same_release(copy.version, loaded) &&
          c.status == Status::ok) {
        c.status = Status::warn;
        c.cause = std::string(var) + "=" + root + " holds NVRTC " + copy.version + " but opkit loaded NVRTC " + loaded +
                  " (" + ctx.nvrtc.path + "): tools that follow " + var + " use another toolkit";
        c.fix = "point " + std::string(var) + " at the toolkit you mean to use, or pin opkit with OPKIT_NVRTC";
      }
  }
  ctx.add(std::move(c));
}

void check_cache(Context& ctx) {
  Check c = named("cache");
  const KernelCache& cache = KernelCache::global();
  const char* flag = std::getenv("OPKIT_CACHE");
  if (!cache.enabled()) {
    bool off_by_choice = flag != nullptr && std::string_view(flag) == "0";
    c.status = off_by_choice ? Status::skip : Status::warn;
    c.detail = "kernel cache disabled: " + cache.last_error();
    if (!off_by_choice) {
      c.cause = cache.last_error() + "; every process compiles its kernels again";
      c.fix =
          "set OPKIT_CACHE_DIR to a directory of your own (it is created with mode 0700), or OPKIT_CACHE=0 to "
          "turn the cache off on purpose";
    }
    ctx.add(std::move(c));
    return;
  }
  c.facts.emplace_back("directory", cache.directory().string());
  // A real write: access() says yes to root on a read-only file system's siblings, a file does not lie.
  std::string probe = (cache.directory() / ".opkit-doctor.XXXXXX").string();
  int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    c.status = Status::warn;
    c.detail = cache.directory().string() + " is not writable";
    c.cause = std::string("creating a file there failed: ") + std::generic_category().message(errno);
    c.fix = "fix the directory's permissions, or set OPKIT_CACHE_DIR to a writable directory of your own";
    ctx.add(std::move(c));
    return;
  }
  ::close(fd);
  ::unlink(probe.c_str());
  std::size_t entries = 0, bytes = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(cache.directory(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".bin") {
      ++entries;
      std::error_code size_ec;
      auto size = it->file_size(size_ec);
      if (!size_ec) bytes += size;
    }
  c.detail = cache.directory().string() + " (" + std::to_string(entries) + " entries, " + bytes_text(bytes) + ")";
  c.facts.emplace_back("entries", std::to_string(entries));
  c.facts.emplace_back("bytes", std::to_string(bytes));
  ctx.add(std::move(c));
}

void check_cpu_backend(Context& ctx) {
  Check c = named("cpu backend");
  backend::Backend* cpu = find_backend("cpu");
  if (cpu == nullptr || !cpu->available()) {
    c.status = Status::warn;
    c.detail = "CPU backend unavailable";
    c.cause = cpu == nullptr ? "this build of opkit has no CPU backend" : cpu->unavailable_reason();
    c.fix = c.cause.find("no CPU backend") != std::string::npos
                ? "rebuild opkit with its CPU backend (src/backend/cpu) to run kernels without a GPU"
                : "install a C++ compiler (g++ or clang++; or set CXX to one) to run kernels on the CPU";
    ctx.add(std::move(c));
    return;
  }
  const std::optional<backend::RuntimeDependency> compiler = cpu->runtime_dependency();
  c.detail = compiler ? "host compiler: " + compiler->description : "available";
  try {
    Device device = Device::cpu();
    c.detail += "; " + device.info().name;
    ctx.add(std::move(c));
    if (ctx.options.smoke)
      smoke(ctx, device, "cpu");
    else
      ctx.add(make_check("smoke cpu", Status::skip, "smoke test not asked for"));
  } catch (const Error& e) {
    c.status = Status::fail;
    c.cause = first_line(e.what());
    c.fix = "check the host compiler (CXX)";
    ctx.add(std::move(c));
  }
}

}  // namespace

const char* status_name(Status status) noexcept {
  switch (status) {
    case Status::ok:
      return "ok";
    case Status::warn:
      return "warn";
    case Status::fail:
      return "fail";
    case Status::skip:
      return "skip";
  }
  return "?";
}

Verdict verdict(const Report& report, bool require_gpu) {
  const std::string gpus =
      std::to_string(report.working_gpus) + (report.working_gpus == 1 ? " GPU works" : " GPUs work");
  const std::string cpu = report.cpu_backend_works ? "the CPU backend works" : "the CPU backend does not work";
  Verdict v;
  v.ready = require_gpu ? report.working_gpus > 0 : report.any_backend_works();
  const std::string why = v.ready ? "" : require_gpu ? " (a GPU is required)" : " (no backend can run kernels)";
  v.summary = gpus + ", " + cpu + why;
  return v;
}

std::string render(const Report& report, const Verdict& verdict) {
  const auto padded = [](std::string text, std::size_t width) {  // printf's %-Ns
    if (text.size() < width) text.resize(width, ' ');
    return text;
  };
  const std::string indent(6 + 16, ' ');  // under the detail column
  std::string text = std::string("opkit ") + version + " doctor\n";
  for (const auto& c : report.checks) {
    text += padded(status_name(c.status), 4) + "  " + padded(c.name, 16) + " " + c.detail + "\n";
    if (!c.cause.empty()) text += indent + " cause: " + c.cause + "\n";
    if (!c.fix.empty()) text += indent + " fix:   " + c.fix + "\n";
  }
  return text + (verdict.ready ? "ready: " : "not ready: ") + verdict.summary + "\n";
}

Report examine(const Options& options) {
  Context ctx;
  ctx.options = options;
  check_driver(ctx);
  check_nvrtc(ctx);
  check_driver_against_nvrtc(ctx);
  check_installs(ctx);
  check_gpus(ctx);
  check_headers(ctx);
  check_cache(ctx);
  check_smoke_gpus(ctx);
  check_cpu_backend(ctx);
  ctx.add(detail::cxx_runtime_check(detail::find_cxx_runtimes()));
  if (!options.smoke) {
    // Without the smoke test, a GPU or CPU backend that opened counts as working.
    for (const auto& check : ctx.report.checks)
      if (check.name.rfind("gpu", 0) == 0 && check.name != "gpu" && check.status != Status::fail)
        ++ctx.report.working_gpus;
    backend::Backend* cpu = find_backend("cpu");
    ctx.report.cpu_backend_works = cpu != nullptr && cpu->available();
  }
  return std::move(ctx.report);
}

}  // namespace opkit::doctor
