// opkit.sha256 / opkit.sha256d over DLPack arrays: a [N, L] uint8 batch (or a flat uint8 buffer
// with uint64 offsets) hashed where it lives. Device memory stays on the device: the input is
// borrowed (BufferView), the [N, 32] output is a new device allocation returned through DLPack,
// and the work is queued on the stream the caller names (the producer's current stream).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <span>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/sha256.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {
namespace {

using ops::HashAlgo;

HashAlgo parse_algo(const std::string& name) {
  if (name == "sha256") return HashAlgo::sha256;
  if (name == "sha256d") return HashAlgo::sha256d;
  throw Error(Errc::invalid_argument, "sha256", "unknown algorithm '" + name + "' (sha256 or sha256d)");
}

template <class... Args>
void hash(HashAlgo algo, const Args&... args) {
  if (algo == HashAlgo::sha256d)
    ops::sha256d(args...);
  else
    ops::sha256(args...);
}

// The device that hashes device-resident data: the data's own GPU; a `device` given by the
// caller must be that one.
Device device_for(const AnyArray& data, const std::optional<Device>& requested) {
  Device device = cuda_device_of(data, "sha256");
  if (requested && !(*requested == device))
    throw Error(Errc::invalid_argument, "sha256",
                "the data lives on cuda:" + std::to_string(data.device_id()) + " but device=" +
                    requested->info().name + " was requested (move the data, or drop device=)");
  return device;
}

std::span<const std::uint8_t> host_bytes(const AnyArray& array) {
  return {static_cast<const std::uint8_t*>(array.data()), array.nbytes()};
}

void check_fixed(const AnyArray& data) {
  if (data.ndim() != 2)
    throw Error(Errc::invalid_argument, "sha256",
                "expected a 2-D [N, L] uint8 array (N messages of L bytes), got " + std::to_string(data.ndim()) +
                    " dimension(s)");
  require_dtype(data, 8, false, "sha256");
  require_contiguous(data, "sha256");
}

nb::object hash_fixed(AnyArray data, const std::string& algo_name, std::optional<Device> device, bool host_cpu,
                      std::optional<std::uintptr_t> stream_handle) {
  HashAlgo algo = parse_algo(algo_name);
  check_fixed(data);
  const std::size_t rows = data.shape(0), length = data.shape(1);

  if (on_host(data)) {
    auto out = host_array(rows, ops::sha256_digest_bytes);
    ops::HashOptions options;
    options.device = device;
    options.host_cpu = host_cpu;
    std::span<std::uint8_t> digests(out.data(), rows * ops::sha256_digest_bytes);
    {
      nb::gil_scoped_release unlocked;
      if (rows != 0) hash(algo, host_bytes(data), length, digests, options);
    }
    return nb::cast(out);
  }

  if (host_cpu)
    throw Error(Errc::invalid_argument, "sha256",
                "the data lives on cuda:" + std::to_string(data.device_id()) +
                    "; hashing it on the host CPU needs a copy to the host first");
  Device where = device_for(data, device);
  void* out_data = nullptr;
  nb::ndarray<nb::array_api> out = device_array(where, {rows, ops::sha256_digest_bytes}, nb::dtype<std::uint8_t>(), &out_data);
  if (rows != 0) {
    std::optional<Stream> stream;
    if (stream_handle) stream = where.borrow_stream(address(*stream_handle));
    ops::HashOptions options;
    options.stream = stream ? &*stream : nullptr;
    BufferView<const std::uint8_t> in(where, static_cast<const std::uint8_t*>(data.data()), rows * length);
    BufferView<std::uint8_t> digests(where, static_cast<std::uint8_t*>(out_data), rows * ops::sha256_digest_bytes);
    nb::gil_scoped_release unlocked;
    hash(algo, in, length, digests, options);
  }
  return nb::cast(out);
}

nb::object hash_offsets(AnyArray data, AnyArray offsets, const std::string& algo_name, std::optional<Device> device,
                        bool host_cpu, std::optional<std::uintptr_t> stream_handle) {
  HashAlgo algo = parse_algo(algo_name);
  if (data.ndim() != 1 || offsets.ndim() != 1)
    throw Error(Errc::invalid_argument, "sha256", "with offsets, data and offsets must both be 1-D arrays");
  require_dtype(data, 8, false, "sha256 data");
  require_dtype(offsets, 64, false, "sha256 offsets");
  require_contiguous(data, "sha256 data");
  require_contiguous(offsets, "sha256 offsets");
  if (offsets.shape(0) == 0)
    throw Error(Errc::invalid_argument, "sha256", "offsets must hold N + 1 entries for N messages (got none)");
  if (on_host(data) != on_host(offsets) || (!on_host(data) && data.device_id() != offsets.device_id()))
    throw Error(Errc::invalid_argument, "sha256", "data and offsets must live on the same device");
  const std::size_t rows = offsets.shape(0) - 1;

  if (on_host(data)) {
    auto out = host_array(rows, ops::sha256_digest_bytes);
    ops::HashOptions options;
    options.device = device;
    options.host_cpu = host_cpu;
    std::span<const std::uint64_t> offs(static_cast<const std::uint64_t*>(offsets.data()), offsets.shape(0));
    std::span<std::uint8_t> digests(out.data(), rows * ops::sha256_digest_bytes);
    {
      nb::gil_scoped_release unlocked;
      hash(algo, host_bytes(data), offs, digests, options);
    }
    return nb::cast(out);
  }

  if (host_cpu)
    throw Error(Errc::invalid_argument, "sha256",
                "the data lives on cuda:" + std::to_string(data.device_id()) +
                    "; hashing it on the host CPU needs a copy to the host first");
  Device where = device_for(data, device);
  void* out_data = nullptr;
  nb::ndarray<nb::array_api> out = device_array(where, {rows, ops::sha256_digest_bytes}, nb::dtype<std::uint8_t>(), &out_data);
  std::optional<Stream> stream;
  if (stream_handle) stream = where.borrow_stream(address(*stream_handle));
  ops::HashOptions options;
  options.stream = stream ? &*stream : nullptr;
  BufferView<const std::uint8_t> in(where, static_cast<const std::uint8_t*>(data.data()), data.shape(0));
  BufferView<const std::uint64_t> offs(where, static_cast<const std::uint64_t*>(offsets.data()), offsets.shape(0));
  BufferView<std::uint8_t> digests(where, static_cast<std::uint8_t*>(out_data), rows * ops::sha256_digest_bytes);
  {
    nb::gil_scoped_release unlocked;
    hash(algo, in, offs, digests, options);
  }
  return nb::cast(out);
}

}  // namespace

void bind_sha256(nb::module_& m) {
  m.def("hash_fixed", &hash_fixed, "data"_a, "algo"_a, "device"_a = nb::none(), "host_cpu"_a = false, "stream"_a = nb::none(),
        "Digests of a [N, L] uint8 array as a [N, 32] uint8 array on the data's device.");
  m.def("hash_offsets", &hash_offsets, "data"_a, "offsets"_a, "algo"_a, "device"_a = nb::none(),
        "host_cpu"_a = false, "stream"_a = nb::none(), "Digests of data[offsets[i]:offsets[i + 1]] as a [N, 32] uint8 array.");
}

}  // namespace opkit::python
