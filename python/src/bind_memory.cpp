// Raw device memory for the PyCUDA-style API: DeviceAllocation (owning, like PyCUDA's
// mem_alloc result) and byte copies/fills between integer addresses. The Python layer checks
// host arrays (contiguity, size) before it passes their addresses here.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "interruptible.hpp"
#include "opkit/error.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {
namespace {

// Device memory owned by a Python object; freed by free() or when the object dies.
class DeviceAllocation {
 public:
  DeviceAllocation(Device device, std::size_t bytes)
      : device_(std::move(device)), data_(device_.allocate(bytes)), bytes_(bytes) {}
  ~DeviceAllocation() { free(); }
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  void free() noexcept {
    if (data_ != nullptr) device_.deallocate(data_);
    data_ = nullptr;
  }
  std::uintptr_t address() const {
    if (data_ == nullptr) throw Error(Errc::invalid_argument, "DeviceAllocation", "the allocation was freed");
    return reinterpret_cast<std::uintptr_t>(data_);
  }
  std::size_t bytes() const noexcept { return bytes_; }
  const Device& device() const noexcept { return device_; }
  bool freed() const noexcept { return data_ == nullptr; }

 private:
  Device device_;
  void* data_;
  std::size_t bytes_;
};

CopyKind copy_kind(const std::string& name) {
  if (name == "htod") return CopyKind::host_to_device;
  if (name == "dtoh") return CopyKind::device_to_host;
  if (name == "dtod") return CopyKind::device_to_device;
  throw Error(Errc::invalid_argument, "copy", "unknown copy kind '" + name + "' (htod, dtoh or dtod)");
}

}  // namespace

void bind_memory(nb::module_& m) {
  nb::class_<DeviceAllocation>(m, "DeviceAllocation",
                               "Device memory that opkit allocated (opkit.mem_alloc): freed when the object dies "
                               "or by free(); int(a) and a.ptr are its address, which kernels take as a pointer.")
      .def(nb::init<Device, std::size_t>(), "device"_a, "nbytes"_a, "Allocates nbytes on the device.")
      .def("free", &DeviceAllocation::free, "Frees the memory now instead of when the object dies.")
      .def_prop_ro("ptr", &DeviceAllocation::address, "The device address (opkit.Error once freed).")
      .def_prop_ro("nbytes", &DeviceAllocation::bytes, "Its size in bytes.")
      .def_prop_ro("device", &DeviceAllocation::device, "The device it lives on.")
      .def_prop_ro("freed", &DeviceAllocation::freed, "True once free() ran.")
      .def("__int__", &DeviceAllocation::address)
      .def("__index__", &DeviceAllocation::address)
      .def("__repr__", [](const DeviceAllocation& a) {
        return "<opkit.DeviceAllocation " + std::to_string(a.bytes()) + " bytes" + (a.freed() ? ", freed>" : ">");
      });

  m.def(
      "copy",
      [](const Device& device, std::uintptr_t dst, std::uintptr_t src, std::size_t bytes, const std::string& kind,
         std::optional<Stream> stream) {
        CopyKind k = copy_kind(kind);
        // Without a stream the copy waits for the kernels before it: Ctrl-C must end that wait.
        interruptible([&] { device.copy(address(dst), address(src), bytes, k, stream ? &*stream : nullptr); });
      },
      "device"_a, "dst"_a, "src"_a, "nbytes"_a, "kind"_a, "stream"_a = nb::none(),
      "Copies nbytes between addresses; synchronous without a stream, queued on it with one.");

  m.def(
      "fill",
      [](const Device& device, std::uintptr_t dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
         std::optional<Stream> stream) {
        interruptible([&] { device.fill(address(dst), pattern, pattern_bytes, count, stream ? &*stream : nullptr); });
      },
      "device"_a, "dst"_a, "pattern"_a, "pattern_bytes"_a, "count"_a, "stream"_a = nb::none());
}

}  // namespace opkit::python
