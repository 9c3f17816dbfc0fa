// `opkit compile FILE.cu [-o OUT.cubin|OUT.ptx] [--arch sm_XX] [-D ...] [-I ...]`: ahead-of-time
// compilation with NVRTC, no GPU needed. It is opkit::build for Target::cuda(arch), the path every
// Device::compile takes, so compiling ahead also warms the cache for later runs.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_source_file.hpp"
#include "commands.hpp"
#include "opkit/opkit.hpp"
#include "opkit/registry.hpp"
#include "opkit/target.hpp"

namespace opkit::cli {
namespace {

struct CompileOptions {
  SourceOptions source;
  std::string output;
  std::string arch;
  bool json = false;
};

std::string default_arch() {
  const std::vector<Device> gpus = find_backend("cuda") != nullptr ? Device::all("cuda") : std::vector<Device>{};
  if (gpus.empty()) {
    std::string reason = "this build has no CUDA backend";
    for (const BackendStatus& b : backends())
      if (b.name == "cuda") reason = b.reason;
    throw Error(Errc::invalid_argument, "opkit compile",
                "no --arch given and no CUDA GPU to take it from (" + reason +
                    "); name the target, e.g. --arch sm_90 for an H100/H200, sm_80 for an A100");
  }
  return gpus.front().info().arch;
}

std::string cache_text(const BuildResult& built) {
  switch (built.cache) {
    case CacheOutcome::off:
      return "off";
    case CacheOutcome::hit:
      return "hit";
    case CacheOutcome::miss:
      return "miss";
    case CacheOutcome::not_stored:
      return "miss (not stored: " + built.cache_error + ")";
  }
  return "off";
}

void compile(const CompileOptions& options, int& exit_code) {
  namespace fs = std::filesystem;
  Program program = load_program(options.source);
  std::string arch = options.arch.empty() ? default_arch() : options.arch;
  const std::optional<CudaArch> parsed = parse_cuda_arch(arch);
  if (!parsed)
    throw Error(Errc::invalid_argument, "--arch", "'" + arch + "' is not a CUDA arch; write it as sm_90 or compute_90");

  fs::path output = options.output;
  const int sm = parsed->sm;
  bool want_ptx = parsed->ptx;
  if (output.empty()) {
    output = fs::path(options.source.file).stem();
    output += want_ptx ? ".ptx" : ".cubin";
  } else if (output.extension() == ".ptx") {
    want_ptx = true;
  } else if (output.extension() != ".cubin") {
    throw Error(Errc::invalid_argument, "-o", "'" + output.string() + "' must end in .cubin or .ptx");
  } else if (want_ptx) {
    throw Error(Errc::invalid_argument, "-o",
                arch + " asks for PTX but " + output.string() + " is a .cubin; use --arch sm_" + std::to_string(sm) +
                    " or -o with .ptx");
  }

  // The key and cache a GPU of this arch uses (Device::compile builds for Target{cuda, sm_XX}).
  const BuildResult built = build(program, Target::cuda((want_ptx ? "compute_" : "sm_") + std::to_string(sm)));
  const std::string cache_state = cache_text(built);
  const std::string& key = built.key;
  const CompiledProgram* compiled = &built.program;
  if (!want_ptx && compiled->format != BinaryFormat::cubin)
    throw Error(Errc::invalid_argument, "opkit compile",
                "NVRTC cannot make a cubin for sm_" + std::to_string(sm) + " (only PTX for " + compiled->target +
                    "); write -o " + fs::path(output).replace_extension(".ptx").string() +
                    ", or use the NVRTC of a CUDA release that knows sm_" + std::to_string(sm));

  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(compiled->binary.data()),
            static_cast<std::streamsize>(compiled->binary.size()));
  out.close();
  if (!out) throw Error(Errc::io, "opkit compile", "cannot write " + output.string());

  if (!compiled->log.empty()) std::fprintf(stderr, "%s\n", compiled->log.c_str());
  if (options.json) {
    nlohmann::json kernels = nlohmann::json::object();
    for (const auto& [name, symbol] : compiled->lowered_names) kernels[name] = symbol;
    nlohmann::json result = {{"source", options.source.file},
                             {"output", output.string()},
                             {"format", binary_format_name(compiled->format)},
                             {"target", compiled->target},
                             {"bytes", compiled->binary.size()},
                             {"kernels", kernels},
                             {"cache", cache_state},
                             {"cache_key", key},
                             {"log", compiled->log}};
    std::printf("%s\n", result.dump().c_str());
  } else {
    std::string names;
    for (const auto& [name, symbol] : compiled->lowered_names) names += (names.empty() ? "" : ", ") + name;
    std::printf("%s -> %s (%s %s, %zu bytes%s; cache: %s)\n", options.source.file.c_str(), output.string().c_str(),
                binary_format_name(compiled->format).c_str(), compiled->target.c_str(), compiled->binary.size(),
                names.empty() ? "" : ("; kernels: " + names).c_str(), cache_state.c_str());
  }
  exit_code = 0;
}

}  // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* command = app.add_subcommand("compile", "Compile CUDA C++ to a cubin or PTX with NVRTC (no GPU needed)");
  command->add_option("file", options->source.file, "CUDA C++ source file (.cu)")->required();
  command->add_option("-o,--output", options->output,
                      "Output file, .cubin or .ptx (default: the source's name with .cubin, in this directory)");
  command->add_option("--arch", options->arch,
                      "Target: sm_XX for a cubin, compute_XX for PTX (default: the first GPU's arch)");
  command->add_flag("--json", options->json, "Print the result (and whether the kernel cache hit) as JSON");
  add_source_options(*command, options->source);
  command->callback([options, &exit_code] { compile(*options, exit_code); });
}

}  // namespace opkit::cli
