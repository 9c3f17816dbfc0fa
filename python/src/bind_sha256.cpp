// opkit.sha256 / opkit.sha256d over DLPack arrays: a [N, L] uint8 batch (or a flat uint8 buffer
// with 64-bit offsets; 32-bit ones on a GPU are widened there) hashed where it lives. Device
// memory stays on the device: the input is borrowed (BufferView), the [N, 32] output is a new
// device allocation returned through DLPack, and the work is queued on the stream the caller
// names (the producer's current stream).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "arrays.hpp"
#include "bindings.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/sha256.hpp"
#include "widen_offsets.hpp"

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

// Where the caller asked the work to run: `device` for host data (unset: the best device),
// `host_cpu` for OpenSSL on the host, `stream` (a native handle) for device data.
struct Placement {
  std::optional<Device> device;
  bool host_cpu = false;
  std::optional<std::uintptr_t> stream;
};

std::string device_name(const Device& device) {
  return device.id();
}

// Hashes host data into a new NumPy array, or device data into a new allocation on its GPU.
// `work(options, digests)` runs the operator; digests is a host span or a device BufferView
// (device_digests_v tells which), and the work passes the input in the same form.
template <class Work>
nb::object digests(const AnyArray& data, std::size_t rows, const Placement& where, Work work) {
  const std::size_t bytes = rows * ops::sha256_digest_bytes;
  if (on_host(data)) {
    auto out = host_array(rows, ops::sha256_digest_bytes);
    ops::HashOptions options;
    options.device = where.device;
    options.host_cpu = where.host_cpu;
    std::span<std::uint8_t> host_digests(out.data(), bytes);
    {
      nb::gil_scoped_release unlocked;
      work(options, host_digests);
    }
    return nb::cast(out);
  }
  Device gpu = cuda_device_of(data, "sha256");
  if (where.host_cpu)
    throw Error(Errc::invalid_argument, "sha256",
                "the data lives on " + device_name(gpu) + "; copy it to the host to hash it there");
  if (where.device && !(*where.device == gpu))
    throw Error(Errc::invalid_argument, "sha256",
                "the data lives on " + device_name(gpu) + " but device=" + device_name(*where.device) +
                    " was requested (move the data, or drop device=)");
  void* out_data = nullptr;
  nb::ndarray<nb::array_api> out =
      device_array(gpu, {rows, ops::sha256_digest_bytes}, nb::dtype<std::uint8_t>(), &out_data);
  std::optional<Stream> stream;
  if (where.stream) stream = gpu.borrow_stream(address(*where.stream));
  ops::HashOptions options;
  options.stream = stream ? &*stream : nullptr;
  BufferView<std::uint8_t> device_digests(gpu, static_cast<std::uint8_t*>(out_data), bytes);
  {
    nb::gil_scoped_release unlocked;
    work(options, device_digests);
  }
  return nb::cast(out);
}

// The array as the operator takes it: a host span, or a BufferView on `gpu`.
template <class T>
auto host_span(const AnyArray& array) {
  return std::span<const T>(static_cast<const T*>(array.data()), array.size());
}
template <class T>
BufferView<const T> device_view(const Device& gpu, const AnyArray& array) {
  return BufferView<const T>(gpu, static_cast<const T*>(array.data()), array.size());
}

// Whether the work was handed device digests (a BufferView) rather than a host span.
template <class Digests>
constexpr bool device_digests_v = std::is_same_v<std::decay_t<Digests>, BufferView<std::uint8_t>>;

nb::object hash_fixed(AnyArray data, const std::string& algo_name, std::optional<Device> device, bool host_cpu,
                      std::optional<std::uintptr_t> stream) {
  HashAlgo algo = parse_algo(algo_name);
  if (data.ndim() != 2)
    throw Error(Errc::invalid_argument, "sha256",
                "expected a 2-D [N, L] uint8 array (N messages of L bytes), got " + std::to_string(data.ndim()) +
                    " dimension(s)");
  require_dtype(data, 8, false, "sha256");
  require_contiguous(data, "sha256");
  const std::size_t rows = data.shape(0), length = data.shape(1);
  return digests(data, rows, {std::move(device), host_cpu, stream},
                 [&](const ops::HashOptions& options, const auto& out) {
                   if (rows == 0) return;
                   if constexpr (device_digests_v<decltype(out)>)
                     hash(algo, device_view<std::uint8_t>(out.device(), data), length, out, options);
                   else
                     hash(algo, host_span<std::uint8_t>(data), length, out, options);
                 });
}

nb::object hash_offsets(AnyArray data, AnyArray offsets, const std::string& algo_name, std::optional<Device> device,
                        bool host_cpu, std::optional<std::uintptr_t> stream) {
  HashAlgo algo = parse_algo(algo_name);
  if (data.ndim() != 1 || offsets.ndim() != 1)
    throw Error(Errc::invalid_argument, "sha256", "with offsets, data and offsets must both be 1-D arrays");
  require_dtype(data, 8, false, "sha256 data");
  // 32-bit offsets only on a GPU: the Python layer converts host ones of any integer type.
  const bool narrow = !on_host(offsets) && offsets.dtype().bits == 32;
  require_dtype(offsets, narrow ? 32 : 64, false, "sha256 offsets");
  require_contiguous(data, "sha256 data");
  require_contiguous(offsets, "sha256 offsets");
  if (offsets.shape(0) == 0)
    throw Error(Errc::invalid_argument, "sha256", "offsets must hold N + 1 entries for N messages (got none)");
  if (on_host(data) != on_host(offsets) || (!on_host(data) && data.device_id() != offsets.device_id()))
    throw Error(Errc::invalid_argument, "sha256", "data and offsets must live on the same device");
  return digests(
      data, offsets.shape(0) - 1, {std::move(device), host_cpu, stream},
      [&](const ops::HashOptions& options, const auto& out) {
        if (offsets.shape(0) == 1) return;  // no message
        if constexpr (device_digests_v<decltype(out)>) {
          const Device& gpu = out.device();
          std::optional<DeviceBuffer<std::uint64_t>> wide;
          if (narrow) {
            const bool is_signed = offsets.dtype().code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
            wide = widen_offsets(gpu, device_view<std::uint32_t>(gpu, offsets), is_signed, options.stream);
          }
          hash(algo, device_view<std::uint8_t>(gpu, data),
               wide ? BufferView<const std::uint64_t>(*wide) : device_view<std::uint64_t>(gpu, offsets), out, options);
        } else
          hash(algo, host_span<std::uint8_t>(data), host_span<std::uint64_t>(offsets), out, options);
      });
}

// The entry of the torch ops (opkit.torch): raw addresses, because the caller already holds the
// tensors, has checked their dtype, shape, contiguity and device, and allocated `out` through its
// own caching allocator; a DLPack round trip per call would cost more than a small batch's kernel.
// `gpu` unset: host memory, hashed on the host CPU (OpenSSL), returning with the digests written.
// `gpu` set: device memory, queued on `stream` (the framework's current stream) without waiting
// for fixed-length batches; variable-length ones wait, to check the offsets.
void hash_fixed_at(const std::string& algo_name, std::optional<Device> gpu, std::uintptr_t data, std::size_t rows,
                   std::size_t length, std::uintptr_t out, std::uintptr_t stream) {
  const HashAlgo algo = parse_algo(algo_name);
  if (rows == 0) return;
  const std::size_t digest_bytes = rows * ops::sha256_digest_bytes;
  nb::gil_scoped_release unlocked;
  if (!gpu) {
    ops::HashOptions options;
    options.host_cpu = true;
    hash(algo, std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(address(data)), rows * length), length,
         std::span<std::uint8_t>(static_cast<std::uint8_t*>(address(out)), digest_bytes), options);
    return;
  }
  const Stream borrowed = gpu->borrow_stream(address(stream));
  ops::HashOptions options;
  options.stream = &borrowed;
  hash(algo, BufferView<const std::uint8_t>(*gpu, static_cast<const std::uint8_t*>(address(data)), rows * length),
       length, BufferView<std::uint8_t>(*gpu, static_cast<std::uint8_t*>(address(out)), digest_bytes), options);
}

void hash_offsets_at(const std::string& algo_name, std::optional<Device> gpu, std::uintptr_t data,
                     std::size_t data_bytes, std::uintptr_t offsets, std::size_t rows, std::uintptr_t out,
                     std::uintptr_t stream) {
  const HashAlgo algo = parse_algo(algo_name);
  const std::size_t digest_bytes = rows * ops::sha256_digest_bytes;
  const auto* data_bytes_at = static_cast<const std::uint8_t*>(address(data));
  const auto* offsets_at = static_cast<const std::uint64_t*>(address(offsets));
  auto* out_at = static_cast<std::uint8_t*>(address(out));
  nb::gil_scoped_release unlocked;
  if (!gpu) {
    ops::HashOptions options;
    options.host_cpu = true;
    hash(algo, std::span<const std::uint8_t>(data_bytes_at, data_bytes),
         std::span<const std::uint64_t>(offsets_at, rows + 1), std::span<std::uint8_t>(out_at, digest_bytes), options);
    return;
  }
  const Stream borrowed = gpu->borrow_stream(address(stream));
  ops::HashOptions options;
  options.stream = &borrowed;
  hash(algo, BufferView<const std::uint8_t>(*gpu, data_bytes_at, data_bytes),
       BufferView<const std::uint64_t>(*gpu, offsets_at, rows + 1),
       BufferView<std::uint8_t>(*gpu, out_at, digest_bytes), options);
}

}  // namespace

void bind_sha256(nb::module_& m) {
  m.def("hash_fixed", &hash_fixed, "data"_a, "algo"_a, "device"_a = nb::none(), "host_cpu"_a = false,
        "stream"_a = nb::none(), "Digests of a [N, L] uint8 array as a [N, 32] uint8 array on the data's device.");
  m.def("hash_offsets", &hash_offsets, "data"_a, "offsets"_a, "algo"_a, "device"_a = nb::none(), "host_cpu"_a = false,
        "stream"_a = nb::none(), "Digests of data[offsets[i]:offsets[i + 1]] as a [N, 32] uint8 array.");
  m.def("hash_fixed_at", &hash_fixed_at, "algo"_a, "gpu"_a.none(), "data"_a, "rows"_a, "length"_a, "out"_a, "stream"_a,
        "opkit.torch's entry: hashes rows x length bytes at `data` into rows x 32 bytes at `out` (checked tensors' "
        "addresses), on `gpu` and its stream handle `stream`, or on the host CPU when gpu is None.");
  m.def("hash_offsets_at", &hash_offsets_at, "algo"_a, "gpu"_a.none(), "data"_a, "data_bytes"_a, "offsets"_a, "rows"_a,
        "out"_a, "stream"_a, "hash_fixed_at for a flat buffer and rows + 1 64-bit offsets at `offsets`.");
}

}  // namespace opkit::python
