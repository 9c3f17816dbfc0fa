// OPKIT_TEST_DEVICES parsing and the device enumeration behind the conformance suites.
#include "conformance/devices.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "opkit/error.hpp"

namespace opkit::test {
namespace {

constexpr const char* default_request = "cuda,cpu,host";

std::string device_name(const Device& device) {
  const std::string backend = backend_kind_name(device.kind());
  return device.kind() == BackendKind::cpu ? backend : backend + ":" + std::to_string(device.info().ordinal);
}

void add(TargetSelection& selection, Target target) {
  auto same = [&](const Target& t) { return t.name == target.name; };
  if (std::none_of(selection.present.begin(), selection.present.end(), same))
    selection.present.push_back(std::move(target));
}

// A device that the backend cannot give becomes an absent entry with the backend's reason.
template <class Open>
void add_device(TargetSelection& selection, const std::string& name, Open open) {
  try {
    Device device = open();
    add(selection, {device_name(device), device});
  } catch (const Error& e) {
    selection.absent.push_back(name + ": " + e.message());
  }
}

std::optional<int> ordinal_of(const std::string& digits) {
  if (digits.empty() || digits.size() > 4 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return std::nullopt;
  return std::stoi(digits);
}

void add_named(TargetSelection& selection, const std::string& name) {
  if (name == "host") {
    add(selection, {"host", std::nullopt});
  } else if (name == "cpu") {
    add_device(selection, name, [] { return Device::cpu(); });
  } else if (name == "cuda") {
    std::vector<Device> gpus = Device::cuda_devices();
    if (gpus.empty()) add_device(selection, name, [] { return Device::cuda(0); });  // records why
    for (const Device& gpu : gpus) add(selection, {device_name(gpu), gpu});
  } else if (name.rfind("cuda:", 0) == 0 && ordinal_of(name.substr(5))) {
    add_device(selection, name, [&] { return Device::cuda(*ordinal_of(name.substr(5))); });
  } else {
    selection.invalid.push_back(name);
  }
}

}  // namespace

TargetSelection select_targets(const std::string& request) {
  TargetSelection selection;
  selection.request = request.empty() ? default_request : request;
  std::stringstream names(selection.request);
  for (std::string name; std::getline(names, name, ',');) {
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) add_named(selection, name);
  }
  return selection;
}

const TargetSelection& selected_targets() {
  // Never destroyed: its devices must outlive every static that GoogleTest destroys at exit.
  static const auto* selection = [] {
    const char* request = std::getenv("OPKIT_TEST_DEVICES");
    return new TargetSelection(select_targets(request != nullptr ? request : ""));
  }();
  return *selection;
}

std::vector<Target> all_targets() {
  return selected_targets().present;
}

std::vector<Target> device_targets() {
  std::vector<Target> devices;
  for (const Target& t : selected_targets().present)
    if (!t.is_host()) devices.push_back(t);
  return devices;
}

std::string target_test_name(const testing::TestParamInfo<Target>& info) {
  std::string name = info.param.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

void PrintTo(const Target& target, std::ostream* os) {
  *os << target.name;
  if (target.device) *os << " (" << target.device->info().name << ")";
}

}  // namespace opkit::test
