// `opkit run FILE.cu --kernel NAME --block X[,Y[,Z]] [--grid ...] [--arg SPEC]...`: runs one
// kernel without host code and prints its output buffers, one line each (or as JSON).
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_device.hpp"
#include "cli_json.hpp"
#include "cli_kernel_args.hpp"
#include "cli_source_file.hpp"
#include "cli_stop_signals.hpp"
#include "commands.hpp"
#include "opkit/opkit.hpp"

namespace opkit::cli {
namespace {

struct RunOptions {
  SourceOptions source;
  std::string kernel;
  std::string grid = "1";
  std::string block;
  std::uint32_t shared_bytes = 0;
  std::vector<std::string> args;
  std::string device = "auto";
  bool json = false;
};

Dim3 parse_dim3(const std::string& text, const char* option) {
  std::uint32_t v[3] = {1, 1, 1};
  std::size_t start = 0;
  for (int i = 0;; ++i) {
    auto comma = text.find(',', start);
    std::string part = text.substr(start, comma - start);
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v[i]);
    if (i > 2 || part.empty() || ec != std::errc() || end != part.data() + part.size() || v[i] == 0)
      throw Error(Errc::invalid_argument, option,
                  "'" + text + "' is not X[,Y[,Z]] with positive whole numbers (e.g. 256 or 16,16)");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return Dim3(v[0], v[1], v[2]);
}

Device pick_device(const std::string& text) {
  DeviceRequest request = parse_device_option(text, "opkit run", {});
  return request.kind == DeviceRequest::Kind::automatic ? Device::best() : request.devices.front();
}

// Device memory for one buffer argument, freed however the run ends.
class ArgBuffer {
 public:
  ArgBuffer(const Device& device, std::size_t bytes) : device_(device), data_(device.allocate(bytes)) {}
  ~ArgBuffer() { device_.deallocate(data_); }
  ArgBuffer(const ArgBuffer&) = delete;
  ArgBuffer& operator=(const ArgBuffer&) = delete;
  void* data() const { return data_; }

 private:
  Device device_;
  void* data_;
};

// The kernel `name` of the program. A kernel that the source scan cannot see (one that a macro
// defines) is looked up again with its name as a name expression; if that does not compile
// either, the name is unknown, and the error lists the kernels there are.
Kernel find_kernel(const Device& device, Program& program, const std::string& name) {
  Module module = device.compile(program);
  try {
    return module.kernel(name);
  } catch (const Error& unknown) {
    if (unknown.kind() != Errc::not_found) throw;
    try {
      return device.compile(program.name_expression(name)).kernel(name);
    } catch (const Error&) {
      throw unknown;
    }
  }
}

void run(const RunOptions& options, int& exit_code) {
  // Ctrl-C / SIGTERM: every wait below polls the flag; a CPU-backend kernel is stopped, a GPU
  // wait given up, and the error (Errc::interrupted, exit 130) says so.
  StopSignals stop;
  InterruptCheck interrupt([&] { return stop.requested(); });
  std::vector<KernelArg> args;
  for (const auto& spec : options.args) args.push_back(parse_kernel_arg(spec));
  LaunchConfig config{.grid = parse_dim3(options.grid, "--grid"),
                      .block = parse_dim3(options.block, "--block"),
                      .shared_bytes = options.shared_bytes,
                      .stream = nullptr};

  Program program = load_program(options.source);
  if (options.kernel.find('<') != std::string::npos) program.name_expression(options.kernel);  // f<int>
  Device device = pick_device(options.device);
  // A terminal's Ctrl-C also reaches the CPU backend's host compiler, whose failure is then no
  // compile error of the user's.
  std::optional<Kernel> found;
  try {
    found = find_kernel(device, program, options.kernel);
  } catch (const Error&) {
    if (!stop.requested()) throw;
  }
  if (stop.requested()) throw Error(Errc::interrupted, "opkit run", "interrupted before the launch");
  Kernel& kernel = *found;

  // The launch reads each argument through a pointer: buffers as their device address.
  std::vector<std::unique_ptr<ArgBuffer>> buffers(args.size());
  std::vector<void*> addresses(args.size(), nullptr);
  std::vector<void*> pointers(args.size());
  std::vector<std::size_t> sizes(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    KernelArg& arg = args[i];
    if (!arg.is_buffer()) {
      pointers[i] = arg.bytes.data();
      sizes[i] = arg.bytes.size();
      continue;
    }
    std::size_t bytes = arg.count * element_size(arg.type);
    buffers[i] = std::make_unique<ArgBuffer>(device, bytes);
    if (arg.kind == KernelArg::Kind::out)
      device.fill(buffers[i]->data(), 0, 1, bytes);
    else
      device.copy(buffers[i]->data(), arg.bytes.data(), bytes, CopyKind::host_to_device);
    addresses[i] = buffers[i]->data();
    pointers[i] = &addresses[i];
    sizes[i] = sizeof(void*);
  }
  kernel.launch_packed(config, pointers.data(), sizes.data(), args.size());
  device.synchronize();

  nlohmann::json outputs = nlohmann::json::array();
  for (std::size_t i = 0; i < args.size(); ++i) {
    KernelArg& arg = args[i];
    if (!arg.is_output()) continue;
    const std::size_t size = element_size(arg.type);
    arg.bytes.resize(arg.count * size);
    device.copy(arg.bytes.data(), buffers[i]->data(), arg.bytes.size(), CopyKind::device_to_host);
    if (options.json) {
      nlohmann::json values = nlohmann::json::array();
      for (std::size_t k = 0; k < arg.count; ++k) values.push_back(element_json(arg.type, &arg.bytes[k * size]));
      outputs.push_back(std::move(values));
    } else {
      std::string line;
      for (std::size_t k = 0; k < arg.count; ++k) {
        if (k != 0) line += ' ';
        line += format_element(arg.type, &arg.bytes[k * size]);
      }
      std::printf("%s\n", line.c_str());
    }
  }
  if (options.json) {
    nlohmann::json result = {{"kernel", options.kernel},
                             {"device", device.id()},
                             {"device_name", device.info().name},
                             {"outputs", std::move(outputs)}};
    std::printf("%s\n", json_text(result).c_str());
  }
  exit_code = 0;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand("run",
                                         "Compile a kernel, run it once with arguments from the command line, "
                                         "print its output buffers");
  command->add_option("file", options->source.file, "CUDA C++ source file (.cu)")->required();
  command
      ->add_option("-k,--kernel", options->kernel,
                   "Kernel to launch (as written in the source; f<int> for "
                   "templates)")
      ->required();
  command->add_option("-g,--grid", options->grid, "Blocks: X[,Y[,Z]] (default 1)");
  command->add_option("-b,--block", options->block, "Threads per block: X[,Y[,Z]]")->required();
  command->add_option("--shared", options->shared_bytes, "Dynamic shared memory in bytes");
  command
      ->add_option("-a,--arg", options->args,
                   "Kernel argument, in order: i32:5 u32:5 i64:-3 u64:7 f32:1.5 f64:2.5, out:TYPE:COUNT, "
                   "in:TYPE:v1,v2,..., in:TYPE:@FILE, inout:TYPE:... (TYPE: i8 u8 i32 u32 i64 u64 f32 f64)")
      ->allow_extra_args(false);
  command->add_option("-d,--device", options->device,
                      "auto (the first GPU, else the CPU backend), cuda, cuda:N, cpu, or any registered backend's "
                      "name[:N] (docs/cli.md, Devices)");
  command->add_flag("--json", options->json, "Print {\"kernel\", \"device\", \"outputs\": [[...], ...]}");
  add_source_options(*command, options->source);
  command->callback([options, &exit_code] { run(*options, exit_code); });
}

}  // namespace opkit::cli
