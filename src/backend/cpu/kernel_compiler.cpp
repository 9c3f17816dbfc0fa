// The CPU backend's compile pipeline (see kernel_compiler.hpp): option mapping, the two host
// compiler runs in a private directory, and error reports in the user's terms.
#include "kernel_compiler.hpp"

#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "kernel_source.hpp"
#include "opkit/error.hpp"
#include "opkit_cpu_abi.h"
#include "opkit_embedded.hpp"
#include "process.hpp"
#include "static_shared.hpp"
#include "temp_dir.hpp"

namespace opkit::cpu {
namespace {

// Bump when kernel_source.cpp changes the code it generates, or a compiled object is checked
// anew (2: static shared memory): it is part of the cache key.
constexpr int kGeneratorVersion = 2;

// Flags for both passes (the preprocessor sees the macros they define, e.g. __OPTIMIZE__).
// No strict aliasing: CUDA code routinely reinterprets shared memory and vector loads. No FMA
// contraction, so that __fadd_rn and friends are exact. Stack probes, so that a deep frame
// cannot jump over a fiber's guard pages.
const std::vector<std::string> kCodegenFlags = {
    "-O2", "-fPIC", "-fno-strict-aliasing", "-fno-math-errno", "-ffp-contract=off", "-fstack-clash-protection"};

std::string_view embedded(const char* name) {
  std::string_view text = detail::embedded_source(std::string("cpu/") + name);
  if (text.empty()) throw Error(Errc::runtime, "CPU backend", std::string("embedded file cpu/") + name + " is missing");
  return text;
}

// OPKIT_CPU_SANITIZE=address (or any -fsanitize= list) compiles kernels with that sanitizer; it
// only works in a process that already runs the sanitizer's runtime (an ASan build of the host).
std::vector<std::string> sanitize_flags() {
  const char* env = std::getenv("OPKIT_CPU_SANITIZE");
  if (env == nullptr || *env == '\0' || std::string_view(env) == "0") return {};
  std::string value(env);
  if (value.find_first_not_of("abcdefghijklmnopqrstuvwxyz,-") != std::string::npos)
    throw Error(Errc::invalid_argument, "CPU backend",
                "OPKIT_CPU_SANITIZE=" + value + " is not a sanitizer list (e.g. address)");
  return {"-fsanitize=" + value, "-fno-omit-frame-pointer"};
}

// NVRTC options with no meaning for a host compiler (architecture, device code generation,
// diagnostics numbering, PCH). Name before any '='.
const std::set<std::string, std::less<>> kNvrtcOnly = {"--gpu-architecture",
                                                       "-arch",
                                                       "--relocatable-device-code",
                                                       "-rdc",
                                                       "--device-debug",
                                                       "-G",
                                                       "--generate-line-info",
                                                       "-lineinfo",
                                                       "--ptxas-options",
                                                       "-Xptxas",
                                                       "--maxrregcount",
                                                       "-maxrregcount",
                                                       "--ftz",
                                                       "-ftz",
                                                       "--prec-sqrt",
                                                       "-prec-sqrt",
                                                       "--prec-div",
                                                       "-prec-div",
                                                       "--fmad",
                                                       "-fmad",
                                                       "--use_fast_math",
                                                       "-use_fast_math",
                                                       "--extra-device-vectorization",
                                                       "-extra-device-vectorization",
                                                       "--extensible-whole-program",
                                                       "-ewp",
                                                       "--dopt",
                                                       "-dopt",
                                                       "--device-as-default-execution-space",
                                                       "-default-device",
                                                       "--restrict",
                                                       "-restrict",
                                                       "--dlink-time-opt",
                                                       "-dlto",
                                                       "--gen-opt-lto",
                                                       "-gen-opt-lto",
                                                       "--split-compile",
                                                       "-split-compile",
                                                       "--device-int128",
                                                       "-device-int128",
                                                       "--optimization-info",
                                                       "-opt-info",
                                                       "--display-error-number",
                                                       "-err-no",
                                                       "--no-display-error-number",
                                                       "-no-err-no",
                                                       "--diag-error",
                                                       "-diag-error",
                                                       "--diag-suppress",
                                                       "-diag-suppress",
                                                       "--diag-warn",
                                                       "-diag-warn",
                                                       "--brief-diagnostics",
                                                       "-brief-diag",
                                                       "--time",
                                                       "-time",
                                                       "--minimal",
                                                       "-minimal",
                                                       "--device-stack-protector",
                                                       "-device-stack-protector",
                                                       "--Ofast-compile",
                                                       "-Ofc",
                                                       "--fdevice-syntax-only",
                                                       "-fdevice-syntax-only",
                                                       "--fdevice-time-trace",
                                                       "-fdevice-time-trace",
                                                       "--builtin-move-forward",
                                                       "-builtin-move-forward",
                                                       "--builtin-initializer-list",
                                                       "-builtin-initializer-list",
                                                       "--no-source-include",
                                                       "-no-source-include",
                                                       "--pch",
                                                       "-pch",
                                                       "--create-pch",
                                                       "-create-pch",
                                                       "--use-pch",
                                                       "-use-pch",
                                                       "--pch-dir",
                                                       "-pch-dir",
                                                       "--pch-verbose",
                                                       "-pch-verbose",
                                                       "--pch-messages",
                                                       "-pch-messages",
                                                       "--instantiate-templates-in-pch",
                                                       "-instantiate-templates-in-pch",
                                                       "--modify-stack-limit",
                                                       "-modify-stack-limit",
                                                       "--jump-table-density",
                                                       "-jtd",
                                                       "--frandom-seed",
                                                       "-frandom-seed"};

struct HostOptions {
  std::vector<std::string> common;      // both passes
  std::vector<std::string> preprocess;  // -D, -U, -I, -include: first pass only
};

HostOptions map_options(const ProgramSpec& spec) {
  HostOptions out;
  std::string standard = "-std=c++17";
  std::vector<std::string> passed;
  for (const auto& [macro, value] : spec.defines)
    out.preprocess.push_back("-D" + macro + (value.empty() ? "" : "=" + value));
  for (const auto& dir : spec.include_dirs) out.preprocess.push_back("-I" + dir);
  for (const std::string& option : spec.options) {
    std::string name = option.substr(0, option.find('='));
    std::string value = option.find('=') == std::string::npos ? "" : option.substr(option.find('=') + 1);
    if (kNvrtcOnly.count(name) != 0) continue;
    if (name == "--define-macro")
      out.preprocess.push_back("-D" + value);
    else if (name == "--undefine-macro")
      out.preprocess.push_back("-U" + value);
    else if (name == "--include-path")
      out.preprocess.push_back("-I" + value);
    else if (name == "--pre-include" || name == "-include")
      out.preprocess.insert(out.preprocess.end(), {"-include", value});
    else if (option.rfind("-D", 0) == 0 || option.rfind("-U", 0) == 0 || option.rfind("-I", 0) == 0)
      out.preprocess.push_back(option);
    else if (name == "--std" || name == "-std")
      standard = "-std=" + value;
    else if (option == "--disable-warnings")
      passed.emplace_back("-w");
    else
      passed.push_back(option);
  }
  out.common.push_back(standard);
  out.common.insert(out.common.end(), kCodegenFlags.begin(), kCodegenFlags.end());
  for (auto& flag : sanitize_flags()) out.common.push_back(std::move(flag));
  out.common.insert(out.common.end(), passed.begin(), passed.end());
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
    text.replace(p, from.size(), to);
  return text;
}

// The first line that says "error", as the one-line message (the whole log goes with it).
std::string summary(const std::string& log, int exit_code) {
  std::size_t at = log.find("error");
  if (at == std::string::npos) return "host compiler failed (exit " + std::to_string(exit_code) + ")";
  std::size_t start = log.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return log.substr(start, log.find('\n', at) - start);
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

}  // namespace

std::string host_arch() {
  utsname name{};
  return uname(&name) == 0 ? name.machine : "unknown";
}

std::string kernel_target(const HostCompiler& cxx) {
  return host_arch() + "-" + cxx.family + (cxx.version.empty() ? "" : "-" + cxx.version);
}

std::string kernel_compiler_identity(const HostCompiler& cxx) {
  std::uint64_t shim = fnv1a(embedded(kAbiHeader), fnv1a(embedded(kShimHeader)));
  std::string identity = "opkit-cpu generator=" + std::to_string(kGeneratorVersion) + " shim=" + std::to_string(shim) +
                         " target=" + kernel_target(cxx) + " compiler=" + cxx.path + " flags=";
  for (const auto& flag : kCodegenFlags) identity += flag + " ";
  for (const auto& flag : sanitize_flags()) identity += flag + " ";
  return identity + "\n" + cxx.version_output;
}

CompiledProgram compile_kernels(const ProgramSpec& spec, const HostCompiler& cxx) {
  HostOptions options = map_options(spec);
  TempDir dir("opkit-cpu-");
  dir.write(kAbiHeader, embedded(kAbiHeader));
  dir.write(kShimHeader, embedded(kShimHeader));
  for (const auto& [name, content] : spec.headers) dir.write(name, content);
  dir.write("kernel.cpp", first_pass_source(spec.source, spec.name));

  const std::string prefix = dir.path() + "/";
  auto fail = [&](const ProcessResult& r, std::vector<std::string> argv, std::string log) -> Error {
    log = replace_all(std::move(log), prefix, "");
    while (!log.empty() && log.back() == '\n') log.pop_back();
    std::string headline = summary(log, r.exit_code);
    return Error(Errc::compile, "host compiler", std::move(headline))
        .with_log(std::move(log))
        .with_options(std::move(argv))
        .with_source_name(spec.name);
  };

  std::vector<std::string> first = {cxx.path, "-E"};
  first.insert(first.end(), options.common.begin(), options.common.end());
  first.push_back("-I" + dir.path());
  first.insert(first.end(), options.preprocess.begin(), options.preprocess.end());
  first.insert(first.end(), {"-o", dir.file("kernel.ii"), dir.file("kernel.cpp")});
  ProcessResult pre = run_captured(first);
  if (pre.exit_code != 0) throw fail(pre, first, pre.output);

  std::vector<std::uint8_t> preprocessed = dir.read("kernel.ii");
  RewrittenSource rewritten = rewrite_preprocessed(
      std::string_view(reinterpret_cast<const char*>(preprocessed.data()), preprocessed.size()), spec.name);
  std::vector<std::string> kernels;
  auto add = [&](std::string expr) {
    if (!expr.empty() && expr.front() == '&') expr.erase(0, 1);
    if (std::find(kernels.begin(), kernels.end(), expr) == kernels.end()) kernels.push_back(std::move(expr));
  };
  for (const std::string& name : find_kernel_names(rewritten.user_code)) {
    auto [first, last] = rewritten.kernel_namespaces.equal_range(name);
    if (first == last) add(name);
    for (auto it = first; it != last; ++it) add(it->second.empty() ? name : it->second + "::" + name);
  }
  for (const std::string& expr : spec.name_expressions) add(expr);
  dir.write("kernel_cpu.ii", rewritten.text + entry_points(kernels));

  std::vector<std::string> second = {cxx.path};
  second.insert(second.end(), options.common.begin(), options.common.end());
  second.insert(second.end(), {"-shared", "-fvisibility=hidden"});
  // g++ marks some template statics STB_GNU_UNIQUE, which would merge them across kernel
  // modules and keep dlclose from unloading one.
  if (cxx.is_gcc()) second.emplace_back("-fno-gnu-unique");
  second.insert(second.end(), {"-o", dir.file("kernel.so"), "-x", "c++-cpp-output", dir.file("kernel_cpu.ii")});
  ProcessResult code = run_captured(second);
  if (code.exit_code != 0) throw fail(code, second, pre.output + code.output);

  CompiledProgram out;
  out.format = BinaryFormat::host_dso;
  out.target = kernel_target(cxx);
  out.source_name = spec.name;
  out.binary = dir.read("kernel.so");
  if (out.binary.empty()) throw fail(code, second, "the host compiler wrote no shared object\n" + code.output);
  out.log = replace_all(pre.output + code.output, prefix, "");
  while (!out.log.empty() && out.log.back() == '\n') out.log.pop_back();
  for (const auto& name : kernels) out.lowered_names[name] = name;
  // As ptxas refuses a kernel over a GPU's static shared memory, so does the CPU backend.
  for (const auto& [kernel, bytes] : static_shared_bytes(out.binary, kernels)) {
    if (bytes <= kMaxStaticSharedBytes) continue;
    std::string message = "kernel " + kernel + " uses too much shared data (" + std::to_string(bytes) + " bytes, " +
                          std::to_string(kMaxStaticSharedBytes) + " max): no GPU allows more static __shared__ memory";
    throw Error(Errc::compile, "CPU backend", message)
        .with_log(message)
        .with_source_name(spec.name)
        .with_kernel(kernel);
  }
  return out;
}

}  // namespace opkit::cpu
