// opkit.lz4_compress / opkit.lz4_decompress over 1-D uint8 DLPack arrays: host data goes through
// the host-data API (liblz4 on the host unless a device is named), CUDA data through the
// device-memory API on its own GPU, the result a new allocation there (handed out via DLPack).
#include <nanobind/stl/optional.h>

#include <optional>
#include <span>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {
namespace {

std::span<const std::uint8_t> host_bytes(const AnyArray& a) {
  return {static_cast<const std::uint8_t*>(a.data()), a.size()};
}

void check_bytes(const AnyArray& a, const char* what) {
  if (a.ndim() != 1)
    throw Error(Errc::invalid_argument, what, "expected a 1-D uint8 array, got " + std::to_string(a.ndim()) + " dimension(s)");
  require_dtype(a, 8, false, what);
  require_contiguous(a, what);
}

nb::object to_numpy(const std::vector<std::uint8_t>& bytes) {
  auto out = host_array(1, bytes.size());
  if (!bytes.empty()) std::copy(bytes.begin(), bytes.end(), out.data());
  return nb::cast(out);
}

nb::object to_device_array(const Device& gpu, const DeviceBuffer<std::uint8_t>& result) {
  void* data = nullptr;
  nb::ndarray<nb::array_api> out = device_array(gpu, {result.size()}, nb::dtype<std::uint8_t>(), &data);
  if (!result.empty())
    BufferView<std::uint8_t>(gpu, static_cast<std::uint8_t*>(data), result.size()).copy_from(result.view());
  return nb::cast(out);
}

// Host results come back as [1, n] NumPy arrays (the Python side flattens them).
nb::object compress(AnyArray data, unsigned block_size_id, bool block_checksums, bool content_checksum,
                    bool content_size, std::optional<Device> device) {
  check_bytes(data, "lz4_compress");
  if (block_size_id < 4 || block_size_id > 7)
    throw Error(Errc::invalid_argument, "lz4_compress", "block size id must be 4..7 (64 KiB .. 4 MiB)");
  ops::Lz4CompressOptions options;
  options.block_size = static_cast<ops::Lz4BlockSize>(block_size_id);
  options.block_checksums = block_checksums;
  options.content_checksum = content_checksum;
  options.content_size = content_size;
  if (on_host(data)) {
    options.device = std::move(device);
    std::vector<std::uint8_t> frame;
    {
      nb::gil_scoped_release unlocked;
      frame = ops::lz4_compress(host_bytes(data), options);
    }
    return to_numpy(frame);
  }
  const Device gpu = cuda_device_of(data, "lz4_compress");
  options.device = std::move(device);
  const BufferView<const std::uint8_t> in(gpu, static_cast<const std::uint8_t*>(data.data()), data.size());
  std::optional<DeviceBuffer<std::uint8_t>> frame;
  {
    nb::gil_scoped_release unlocked;
    frame.emplace(ops::lz4_compress(in, options));
  }
  return to_device_array(gpu, *frame);
}

nb::object decompress(AnyArray frames, std::size_t max_size, bool verify, std::optional<Device> device) {
  check_bytes(frames, "lz4_decompress");
  ops::Lz4DecompressOptions options;
  options.max_output = max_size;
  options.verify_checksums = verify;
  options.device = std::move(device);
  if (on_host(frames)) {
    std::vector<std::uint8_t> data;
    {
      nb::gil_scoped_release unlocked;
      data = ops::lz4_decompress(host_bytes(frames), options);
    }
    return to_numpy(data);
  }
  const Device gpu = cuda_device_of(frames, "lz4_decompress");
  const BufferView<const std::uint8_t> in(gpu, static_cast<const std::uint8_t*>(frames.data()), frames.size());
  std::optional<DeviceBuffer<std::uint8_t>> data;
  {
    nb::gil_scoped_release unlocked;
    data.emplace(ops::lz4_decompress(in, options));
  }
  return to_device_array(gpu, *data);
}

}  // namespace

void bind_lz4(nb::module_& m) {
  m.def("lz4_compress", &compress, "data"_a, "block_size_id"_a, "block_checksums"_a, "content_checksum"_a,
        "content_size"_a, "device"_a.none());
  m.def("lz4_decompress", &decompress, "frames"_a, "max_size"_a, "verify"_a, "device"_a.none());
  m.attr("lz4_default_max_output") = ops::lz4_default_max_output;
}

}  // namespace opkit::python
