// OPKIT_TEST_DEVICES parsing over the backend registry (Device::parse, Device::all(backend)).
#include "conformance/devices.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "cpu_deferred.hpp"
#include "cpu_serial.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"

namespace opkit::test {
namespace {

void add(TargetSelection& selection, Target target) {
  auto same = [&](const Target& t) { return t.name == target.name; };
  if (std::none_of(selection.present.begin(), selection.present.end(), same))
    selection.present.push_back(std::move(target));
}

void add_device(TargetSelection& selection, const Device& device) {
  add(selection, {device.id(), device});
}

// Every registered backend, then host: what runs when nothing is asked for.
std::string default_request() {
  std::string request;
  for (const BackendStatus& backend : backends()) request += backend.name + ",";
  return request + "host";
}

void add_named(TargetSelection& selection, const std::string& name) {
  if (name == "host") return add(selection, {"host", std::nullopt});
  // A bare backend name: each of its devices (none: absent, with the backend's reason).
  for (const BackendStatus& backend : backends()) {
    if (backend.name != name) continue;
    std::vector<Device> devices = Device::all(name);
    if (devices.empty())
      selection.absent.push_back(name + ": " + (backend.reason.empty() ? "no devices" : backend.reason));
    for (const Device& device : devices) add_device(selection, device);
    return;
  }
  try {
    add_device(selection, Device::parse(name));
  } catch (const Error& e) {
    if (e.kind() == Errc::invalid_argument)
      selection.invalid.push_back(name);
    else
      selection.absent.push_back(name + ": " + e.message());
  }
}

}  // namespace

TargetSelection select_targets(const std::string& request) {
  TargetSelection selection;
  selection.request = request.empty() ? default_request() : request;
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
    register_cpu_serial_backend();  // the test-only backends join the suite like any other
    register_cpu_deferred_backend();
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
