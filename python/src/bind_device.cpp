// Devices, streams and events. Every call that may wait for the GPU releases the GIL and answers
// Ctrl-C (interruptible.hpp).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <optional>
#include <vector>

#include "bindings.hpp"
#include "interruptible.hpp"
#include "opkit/backend.hpp"
#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"
#include "opkit/stream.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {
namespace {

// (DLPack device type, device id) as the backend states its memory's type (dlpack.h: kDLCPU = 1,
// kDLCUDA = 2); host memory has id 0.
std::tuple<int, int> dlpack_device(const Device& device) {
  const int type = find_backend(device.backend())->dlpack_device_type();
  return {type, type == 1 ? 0 : device.info().ordinal};
}

// The streams `with stream:` blocks entered on this thread, innermost last (Python threads are OS
// threads, so each has its own).
thread_local std::vector<Stream> entered_streams;

std::string describe(const Device& device) {
  const DeviceInfo& info = device.info();
  return "<opkit.Device " + device.id() + " '" + info.name + "' " + info.arch + ">";
}

}  // namespace

void bind_device(nb::module_& m) {
  // synchronize() runs through interruptible(): Ctrl-C ends the wait with KeyboardInterrupt.
  nb::class_<Device>(m, "Device",
                     "One device of one backend (a CUDA GPU, the CPU backend, ...): what it is, its streams and "
                     "events, and synchronisation. Get one from opkit.get_device('cuda:0'), Device.parse or "
                     "Device.all; equal devices compare equal and hash alike.")
      .def_static("best", &Device::best, "The first CUDA GPU if one works, else the CPU backend.")
      .def_static("cuda", &Device::cuda, "ordinal"_a = 0, "The CUDA GPU with this ordinal (opkit.Error when absent).")
      .def_static("cpu", &Device::cpu, "The CPU backend's device (kernels run on host threads).")
      .def_static("parse", &Device::parse, "spec"_a,
                  "A device by name: auto, cuda, cuda:N, cpu, or any registered backend's name[:N].")
      .def_static("all", nb::overload_cast<>(&Device::all), "Every device of every available backend, GPUs first.")
      .def_static("all", nb::overload_cast<std::string_view>(&Device::all), "backend"_a, "Every device of one backend.")
      .def_static(
          "cuda_devices", [] { return Device::all("cuda"); }, "Every CUDA GPU (empty without a driver).")
      .def_prop_ro("kind", &Device::backend, "The backend's name (as backend).")
      .def_prop_ro("backend", &Device::backend, "The backend's name: 'cuda', 'cpu', ...")
      .def_prop_ro("id", &Device::id, "'cuda:0': the name Device.parse takes back.")
      .def_prop_ro(
          "ordinal", [](const Device& d) { return d.info().ordinal; }, "Its index among its backend's devices.")
      .def_prop_ro(
          "name", [](const Device& d) { return d.info().name; }, "The product name, e.g. 'NVIDIA H200'.")
      .def_prop_ro(
          "arch", [](const Device& d) { return d.info().arch; }, "What kernels compile for: 'sm_90', a host target.")
      .def_prop_ro(
          "compute_units", [](const Device& d) { return d.info().compute_units; },
          "Multiprocessors of a GPU, threads of the CPU backend.")
      .def_prop_ro(
          "total_memory", [](const Device& d) { return d.info().total_memory; }, "Device memory in bytes.")
      .def_prop_ro(
          "clock_khz", [](const Device& d) { return d.info().clock_khz; }, "The rated clock in kHz (0: unknown).")
      .def_prop_ro(
          "driver", [](const Device& d) { return d.info().driver; }, "The driver or runtime version, as text.")
      .def_prop_ro("is_gpu", &Device::is_gpu, "True for an accelerator, False for the CPU backend.")
      .def_prop_ro("dlpack_device", &dlpack_device, "(DLPack device type, device id) of this device's memory")
      .def(
          "synchronize", [](const Device& d) { interruptible([&] { d.synchronize(); }); },
          "Waits for all work queued on the device (Ctrl-C ends the wait with KeyboardInterrupt).")
      .def("free_memory", &Device::free_memory, "Free device memory in bytes, now.")
      .def("default_stream", &Device::default_stream, "The legacy default stream (handle 0 on CUDA).")
      .def("create_stream", &Device::create_stream, "A new stream of its own, destroyed when the object dies.")
      .def(
          "borrow_stream", [](const Device& d, std::uintptr_t handle) { return d.borrow_stream(address(handle)); },
          "handle"_a, "Wraps a stream created elsewhere (PyTorch, CuPy) by its native handle, without owning it.")
      .def("create_event", &Device::create_event, "A new event, for ordering and timing (Event.elapsed_ms).")
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__hash__", [](const Device& d) { return std::hash<std::string>{}(d.id()); })
      .def("__repr__", &describe);

  m.def(
      "backends",
      [] {
        nb::list out;
        for (const BackendStatus& b : backends()) {
          nb::dict d;
          d["name"] = b.name;
          d["available"] = b.available;
          d["reason"] = b.reason;
          d["is_gpu"] = b.is_gpu;
          out.append(d);
        }
        return out;
      },
      "Every registered backend: name, available, reason (why not), is_gpu.");

  nb::class_<Stream>(m, "Stream",
                     "An ordered queue of device work. Kernels, copies and fills given this stream run in order "
                     "on it; Device.create_stream makes one, Device.borrow_stream wraps a framework's.")
      .def(
          "synchronize", [](const Stream& s) { interruptible([&] { s.synchronize(); }); },
          "Waits for the work queued on this stream (Ctrl-C ends the wait with KeyboardInterrupt).")
      .def("wait_event", &Stream::wait, "event"_a,
           "Work queued on this stream from now on waits for the work the event recorded, on whichever "
           "stream of the device; the host does not wait (cuStreamWaitEvent).")
      .def(
          "wait_stream",
          [](const Stream& s, const Stream& other) {
            if (!(other.device() == s.device()))
              throw Error(Errc::invalid_argument, "Stream.wait_stream", "the other stream belongs to another device");
            Event marker = s.device().create_event();
            marker.record(other);
            s.wait(marker);
          },
          "other"_a, "Work queued here from now on waits for the work queued on `other` so far (torch's name).")
      .def(
          "record_event",
          [](const Stream& s, std::optional<Event> event) {
            Event e = event ? *event : s.device().create_event();
            e.record(s);
            return e;
          },
          "event"_a = nb::none(), "Records `event` (a new one when None) at the current end of this stream; returns it.")
      .def("query", &Stream::query, "True when all work queued on this stream has finished; does not block.")
      .def_prop_ro("done", &Stream::query, "True when all work queued on this stream has finished (CuPy's name).")
      .def_prop_ro(
          "handle", [](const Stream& s) { return reinterpret_cast<std::uintptr_t>(s.native_handle()); },
          "The native handle as an integer (a CUstream for CUDA; 0 is the legacy default stream).")
      .def_prop_ro("device", &Stream::device, "The device whose work it queues.")
      .def(
          "__enter__",
          [](const Stream& s) {
            entered_streams.push_back(s);
            return s;
          },
          "`with stream:` makes it the stream of kernel launches on its device that give no stream=, "
          "on this thread, until the block ends.")
      .def(
          "__exit__", [](const Stream&, nb::args) { entered_streams.pop_back(); }, "Ends the `with stream:` block.")
      .def("__repr__", [](const Stream& s) {
        return "<opkit.Stream " + std::to_string(reinterpret_cast<std::uintptr_t>(s.native_handle())) + " on " +
               describe(s.device()) + ">";
      });

  m.def(
      "_entered_stream",
      [](const Device& device) -> std::optional<Stream> {
        for (auto it = entered_streams.rbegin(); it != entered_streams.rend(); ++it)
          if (it->device() == device) return *it;
        return std::nullopt;
      },
      "device"_a, "The innermost `with stream:` stream of this device on this thread, or None.");

  nb::class_<Event>(m, "Event", "A point in a stream: record it, wait for it, time the work between two.")
      .def(
          "record",
          [](Event& e, std::optional<Stream> stream) {
            e.record(stream ? *stream : e.device().default_stream());
            return e;
          },
          "stream"_a = nb::none(),
          "Marks the current end of the stream's queued work (the device's default stream when None); returns "
          "the event.")
      .def("query", &Event::query, "True when the recorded work has finished (or nothing was recorded); does not block.")
      .def_prop_ro("done", &Event::query, "True when the recorded work has finished (CuPy's name).")
      .def(
          "wait",
          [](const Event& e, std::optional<Stream> stream) {
            (stream ? *stream : e.device().default_stream()).wait(e);
          },
          "stream"_a = nb::none(),
          "Makes work queued on `stream` (the default stream when None) from now on wait for this event; the host "
          "does not wait.")
      .def_prop_ro("device", &Event::device, "The device whose streams it records.")
      .def(
          "synchronize", [](const Event& e) { interruptible([&] { e.synchronize(); }); },
          "Waits until the stream reaches the recorded point (Ctrl-C ends the wait).")
      .def_static("elapsed_ms", &Event::elapsed_ms, "start"_a, "stop"_a,
                  "Milliseconds between two recorded events, both reached or waited for.");
}

}  // namespace opkit::python
