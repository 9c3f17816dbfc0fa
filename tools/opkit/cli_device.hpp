// The one `--device` vocabulary of every subcommand (docs/cli.md, "Devices"), on top of
// opkit::Device::parse: auto, a device (cuda, cuda:N, cpu, any registered backend's name[:N]),
// and where a command has them, host (the operator's native CPU path) and all.
#pragma once

#include <string>
#include <vector>

#include "opkit/device.hpp"

namespace opkit::cli {

// Which of the optional words a command takes, and whether it can use several devices at once
// (then a bare backend name means every device of that backend).
struct DeviceWords {
  bool host = false;
  bool all = false;
  bool several = false;
};

struct DeviceRequest {
  enum class Kind { automatic, host, all, devices };
  Kind kind = Kind::automatic;
  std::vector<Device> devices;  // Kind::devices: never empty
};

// Throws Error(invalid_argument) naming `text` and the words this command takes, or the
// backend's Error(unavailable) when the device does not exist here.
DeviceRequest parse_device_option(const std::string& text, const char* command, DeviceWords words);

// "auto, host, cuda, cuda:N, cpu, cpu:N" for this command (the help text and error messages).
std::string device_vocabulary(DeviceWords words);

}  // namespace opkit::cli
