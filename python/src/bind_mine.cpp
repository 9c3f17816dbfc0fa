// opkit.mine: the proof-of-work search of `opkit mine` (Bitcoin headers or data || nonce). The
// search runs with the GIL released; its progress callback comes back to Python on the calling
// thread, where Ctrl-C (and an exception from the user's callback) stops the search.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/pow.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {
namespace {

// "auto", "host" or "all" (as `opkit mine --device`), or explicit devices (the Python layer
// resolves every other device name to a Device).
ops::MineOptions engines(const std::string& mode, const std::vector<Device>& devices, int cpu_threads) {
  ops::MineOptions options;
  options.cpu_threads = cpu_threads;
  if (!devices.empty()) {
    if (mode != "auto")
      throw Error(Errc::invalid_argument, "mine", "give either devices=[...] or device='" + mode + "', not both");
    options.devices = devices;
    return options;
  }
  if (mode == "auto") return options;
  if (mode == "host") {
    options.cpu = true;
    return options;
  }
  if (mode == "all") {
    options.devices = ops::mine_support().gpus();
    options.cpu = true;
    return options;
  }
  throw Error(Errc::invalid_argument, "mine", "unknown device '" + mode + "' (auto, host, all, or a device)");
}

nb::dict to_dict(const ops::MineResult& r) {
  nb::dict d;
  d["found"] = r.found;
  d["nonce"] = r.found ? nb::cast(r.nonce) : nb::none();
  d["hash"] = r.found ? nb::cast(r.hash_hex) : nb::none();
  d["digest"] = r.found ? nb::object(nb::bytes(reinterpret_cast<const char*>(r.digest.data()), r.digest.size()))
                        : nb::object(nb::none());
  d["hashes"] = r.hashes;
  d["rehashes"] = r.rehashes;
  d["seconds"] = r.seconds;
  d["interrupted"] = r.interrupted;
  d["searched_through"] = r.searched_through ? nb::cast(*r.searched_through) : nb::none();
  d["engines"] = nb::cast(r.engines);
  return d;
}

// Runs one search with the GIL released. Between launches the progress hook re-enters Python: it
// runs signal handlers (Ctrl-C raises KeyboardInterrupt there) and the user's callback; the first
// exception stops the search and is raised once it has returned, carrying the partial result.
template <class Job>
nb::dict run(const Job& job, ops::MineOptions options, std::optional<nb::callable> progress) {
  std::atomic<bool> stop{false};
  std::optional<nb::python_error> pending;
  options.stop = &stop;
  options.progress = [&](const ops::MineProgress& p) {
    nb::gil_scoped_acquire locked;
    if (pending) return;
    try {
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      if (progress) {
        nb::dict d;
        d["hashes"] = p.hashes;
        d["total"] = p.total;
        d["seconds"] = p.seconds;
        d["rate"] = p.rate;
        (*progress)(d);
      }
    } catch (nb::python_error& error) {
      pending.emplace(std::move(error));
      stop = true;
    }
  };
  ops::MineResult result;
  {
    nb::gil_scoped_release unlocked;
    result = ops::mine(job, options);
  }
  nb::dict d = to_dict(result);
  if (pending) {
    pending->value().attr("result") = d;  // lets the caller resume at searched_through + 1
    throw std::move(*pending);
  }
  return d;
}

nb::dict mine_bitcoin(nb::bytes header, std::optional<std::string> target_hex, std::uint64_t start,
                      std::optional<std::uint64_t> count, const std::string& device, const std::vector<Device>& devices,
                      int cpu_threads, std::optional<nb::callable> progress) {
  if (header.size() != 80)
    throw Error(Errc::invalid_argument, "mine",
                "a Bitcoin block header is 80 bytes (160 hex digits), got " + std::to_string(header.size()) + " bytes");
  ops::BitcoinJob job;
  std::memcpy(job.header.bytes.data(), header.c_str(), 80);
  if (target_hex) job.target = ops::Target::from_hex(*target_hex);
  job.start = start;
  job.count = count;
  return run(job, engines(device, devices, cpu_threads), std::move(progress));
}

nb::dict mine_data(nb::bytes data, int difficulty, std::uint64_t start, std::optional<std::uint64_t> count,
                   const std::string& device, const std::vector<Device>& devices, int cpu_threads,
                   std::optional<nb::callable> progress) {
  ops::DataJob job;
  job.data.assign(data.c_str(), data.size());
  job.difficulty_bits = difficulty;
  job.start = start;
  job.count = count;
  return run(job, engines(device, devices, cpu_threads), std::move(progress));
}

}  // namespace

void bind_mine(nb::module_& m) {
  m.def("mine_bitcoin", &mine_bitcoin, "header"_a, "target"_a, "start"_a, "count"_a, "device"_a, "devices"_a,
        "cpu_threads"_a, "progress"_a);
  m.def("mine_data", &mine_data, "data"_a, "difficulty"_a, "start"_a, "count"_a, "device"_a, "devices"_a,
        "cpu_threads"_a, "progress"_a);
  m.def("bitcoin_hash", [](nb::bytes header, std::uint32_t nonce) {
    if (header.size() != 80) throw Error(Errc::invalid_argument, "bitcoin_hash", "a block header is 80 bytes");
    ops::BlockHeader h;
    std::memcpy(h.bytes.data(), header.c_str(), 80);
    return ops::bitcoin_hash_hex(ops::bitcoin_hash(h, nonce));
  });
  m.def(
      "nbits_target", [](std::uint32_t nbits) { return ops::Target::from_compact(nbits).hex(); }, "nbits"_a);
}

}  // namespace opkit::python
