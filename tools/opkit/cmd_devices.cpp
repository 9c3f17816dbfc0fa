// `opkit devices [--json]`: every device of every backend with its properties, and for a backend
// without devices, why.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "opkit/device.hpp"
#include "opkit/registry.hpp"

namespace opkit::cli {
namespace {

std::string memory_text(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}

void list_devices(bool json, int& exit_code) {
  std::vector<Device> devices = Device::all();
  nlohmann::json backends = nlohmann::json::array();
  std::vector<std::string> missing;
  for (const BackendStatus& b : opkit::backends()) {
    backends.push_back({{"backend", b.name}, {"available", b.available}, {"reason", b.reason}});
    if (!b.available) missing.push_back(b.name + ": no devices (" + b.reason + ")");
  }
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& device : devices) {
      const DeviceInfo& info = device.info();
      list.push_back({{"id", device.id()},
                      {"backend", info.backend},
                      {"ordinal", info.ordinal},
                      {"name", info.name},
                      {"arch", info.arch},
                      {"compute_units", info.compute_units},
                      {"total_memory", info.total_memory},
                      {"clock_khz", info.clock_khz},
                      {"driver", info.driver}});
    }
    std::printf("%s\n", nlohmann::json({{"devices", list}, {"backends", backends}}).dump(2).c_str());
  } else {
    for (const auto& device : devices) {
      const DeviceInfo& info = device.info();
      std::string units = std::to_string(info.compute_units) + " " + info.compute_unit_name;
      std::string clock = info.clock_khz > 0 ? ", " + std::to_string(info.clock_khz / 1000) + " MHz" : "";
      std::printf("%s  %s  %s, %s, %s%s, %s\n", device.id().c_str(), info.name.c_str(), info.arch.c_str(),
                  units.c_str(), memory_text(info.total_memory).c_str(), clock.c_str(), info.driver.c_str());
    }
    for (const auto& line : missing) std::printf("%s\n", line.c_str());
  }
  // Like grep: 1 when there is nothing to list.
  exit_code = devices.empty() ? 1 : 0;
}

}  // namespace

void add_devices_command(CLI::App& app, int& exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* command = app.add_subcommand("devices", "List every device of every backend (GPUs first, then the CPU)");
  command->add_flag("--json", *json, "Print {\"devices\": [...], \"backends\": [...]} as JSON");
  command->callback([json, &exit_code] { list_devices(*json, exit_code); });
}

}  // namespace opkit::cli
