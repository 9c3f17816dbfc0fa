// `--device` parsing shared by every subcommand (see cli_device.hpp).
#include "cli_device.hpp"

#include "opkit/error.hpp"
#include "opkit/registry.hpp"

namespace opkit::cli {

std::string device_vocabulary(DeviceWords words) {
  std::string text = "auto";
  if (words.host) text += ", host";
  if (words.all) text += ", all";
  for (const BackendStatus& backend : backends()) text += ", " + backend.name + ", " + backend.name + ":N";
  return text;
}

DeviceRequest parse_device_option(const std::string& text, const char* command, DeviceWords words) {
  DeviceRequest request;
  if (text == "auto") return request;
  if (words.host && text == "host") {
    request.kind = DeviceRequest::Kind::host;
    return request;
  }
  if (words.all && text == "all") {
    request.kind = DeviceRequest::Kind::all;
    return request;
  }
  const std::string name = text.substr(0, text.find(':'));
  if (find_backend(name) == nullptr) {
    std::string hint;
    if (text == "host")
      hint = " (" + std::string(command) + " has no native CPU path; cpu runs the kernel on the CPU backend)";
    throw Error(Errc::invalid_argument, "--device",
                "'" + text + "' is not a device for " + command + "; use one of: " + device_vocabulary(words) + hint);
  }
  request.kind = DeviceRequest::Kind::devices;
  if (words.several && name == text) {
    request.devices = Device::all(name);
    if (request.devices.empty()) request.devices.push_back(Device::parse(name));  // throws, saying why there is none
  } else {
    request.devices.push_back(Device::parse(text));
  }
  return request;
}

}  // namespace opkit::cli
