// opkit.lz4_compress / opkit.lz4_decompress over 1-D uint8 DLPack arrays: host data goes through
// the host-data API (liblz4 on the host unless a device is named), CUDA data through the
// device-memory API on its own GPU, the result a new allocation there (handed out via DLPack).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

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
    throw Error(Errc::invalid_argument, what,
                "expected a 1-D uint8 array, got " + std::to_string(a.ndim()) + " dimension(s)");
  require_dtype(a, 8, false, what);
  require_contiguous(a, what);
}

nb::object to_numpy(const std::vector<std::uint8_t>& bytes) {
  auto out = host_array(1, bytes.size());
  if (!bytes.empty()) std::copy(bytes.begin(), bytes.end(), out.data());
  return nb::cast(out);
}

nb::object to_device_array(const Device& gpu, BufferView<const std::uint8_t> result) {
  void* data = nullptr;
  nb::ndarray<nb::array_api> out = device_array(gpu, {result.size()}, nb::dtype<std::uint8_t>(), &data);
  if (!result.empty()) BufferView<std::uint8_t>(gpu, static_cast<std::uint8_t*>(data), result.size()).copy_from(result);
  return nb::cast(out);
}

ops::Lz4CompressOptions compress_options(unsigned block_size_id, bool block_checksums, bool content_checksum,
                                         bool content_size) {
  if (block_size_id < 4 || block_size_id > 7)
    throw Error(Errc::invalid_argument, "lz4_compress", "block size id must be 4..7 (64 KiB .. 4 MiB)");
  ops::Lz4CompressOptions options;
  options.block_size = static_cast<ops::Lz4BlockSize>(block_size_id);
  options.block_checksums = block_checksums;
  options.content_checksum = content_checksum;
  options.content_size = content_size;
  return options;
}

// Host results come back as [1, n] NumPy arrays (the Python side flattens them).
nb::object compress(AnyArray data, unsigned block_size_id, bool block_checksums, bool content_checksum,
                    bool content_size, std::optional<Device> device) {
  check_bytes(data, "lz4_compress");
  ops::Lz4CompressOptions options = compress_options(block_size_id, block_checksums, content_checksum, content_size);
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
  return to_device_array(gpu, frame->view());
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
  return to_device_array(gpu, data->view());
}

// The batch forms: every item a 1-D uint8 array on one device, all of them in one call of the
// batch API (one launch per step, nvCOMP's batched case): CUDA arrays of one GPU, or host arrays
// with `device` a backend whose memory is host memory (the CPU backend runs the kernels on them in
// place). Results: one array per item, on that device (host items: NumPy).
struct BatchItems {
  Device device;
  bool gpu;
  std::vector<BufferView<const std::uint8_t>> views;
};

BatchItems batch_items(const std::vector<AnyArray>& items, const std::optional<Device>& device, const char* what) {
  if (items.empty()) throw Error(Errc::invalid_argument, what, "a batch needs at least one item");
  for (const AnyArray& item : items) check_bytes(item, what);
  const bool host = on_host(items.front());
  if (host && (!device || device->is_gpu()))
    throw Error(Errc::invalid_argument, what,
                "a batch of host arrays runs on a device whose memory is host memory (the CPU backend)");
  const Device where = host ? *device : cuda_device_of(items.front(), what);
  if (!host && device && !(*device == where))
    throw Error(Errc::invalid_argument, what, "the batch lives on " + where.id() + ", not on " + device->id());
  BatchItems out{where, !host, {}};
  for (std::size_t i = 0; i < items.size(); ++i) {
    const AnyArray& item = items[i];
    if (on_host(item) != host || (!host && !(cuda_device_of(item, what) == where)))
      throw Error(Errc::invalid_argument, what, "batch item " + std::to_string(i) + " lives on another device");
    out.views.emplace_back(where, static_cast<const std::uint8_t*>(item.data()), item.size());
  }
  return out;
}

nb::list batch_results(const BatchItems& batch, const ops::Lz4Batch& results) {
  nb::list out;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const BufferView<const std::uint8_t> item = results.item(i);
    if (batch.gpu) {
      out.append(to_device_array(batch.device, item));
      continue;
    }
    auto array = host_array(1, item.size());  // host-memory backend: the view's bytes are host bytes
    if (!item.empty()) item.copy_to(std::span<std::uint8_t>(array.data(), item.size()));
    out.append(nb::cast(array));
  }
  return out;
}

// The batch calls, with the GIL let go while they run.
ops::Lz4Batch compressed(const BatchItems& batch, const ops::Lz4CompressOptions& options) {
  nb::gil_scoped_release unlocked;
  return ops::lz4_compress_batch(batch.views, options);
}

ops::Lz4Batch decompressed(const BatchItems& batch, std::size_t max_size, bool verify) {
  ops::Lz4DecompressOptions options;
  options.max_output = max_size;
  options.verify_checksums = verify;
  nb::gil_scoped_release unlocked;
  return ops::lz4_decompress_batch(batch.views, options);
}

nb::list compress_batch(const std::vector<AnyArray>& items, unsigned block_size_id, bool block_checksums,
                        bool content_checksum, bool content_size, const std::optional<Device>& device) {
  const ops::Lz4CompressOptions options =
      compress_options(block_size_id, block_checksums, content_checksum, content_size);
  const BatchItems batch = batch_items(items, device, "lz4_compress");
  return batch_results(batch, compressed(batch, options));
}

nb::list decompress_batch(const std::vector<AnyArray>& items, std::size_t max_size, bool verify,
                          const std::optional<Device>& device) {
  const BatchItems batch = batch_items(items, device, "lz4_decompress");
  return batch_results(batch, decompressed(batch, max_size, verify));
}

// The data + offsets forms: item i is data[offsets[i], offsets[i + 1]) of one 1-D uint8 array
// (CUDA, or host with `device` a host-memory backend), all items in one batch call; the result is
// (one array of every result back to back, in data's place; NumPy uint64 offsets of the results).
using HostOffsets = nb::ndarray<const std::uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

BatchItems packed_items(const AnyArray& data, std::span<const std::uint64_t> offsets,
                        const std::optional<Device>& device, const char* what) {
  check_bytes(data, what);
  if (offsets.size() < 2)
    throw Error(Errc::invalid_argument, what,
                "offsets needs at least 2 entries (item i is data[offsets[i]:offsets[i + 1]])");
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i)
    if (offsets[i + 1] < offsets[i])
      throw Error(Errc::invalid_argument, what,
                  "offsets must not decrease: offsets[" + std::to_string(i + 1) +
                      "] = " + std::to_string(offsets[i + 1]) + " < offsets[" + std::to_string(i) +
                      "] = " + std::to_string(offsets[i]));
  if (offsets.back() > data.size())
    throw Error(Errc::invalid_argument, what,
                "offsets end at " + std::to_string(offsets.back()) + ", past the " + std::to_string(data.size()) +
                    " bytes of data");
  const bool host = on_host(data);
  if (host && (!device || device->is_gpu()))
    throw Error(Errc::invalid_argument, what,
                "host data + offsets runs on a device whose memory is host memory (the CPU backend); "
                "for liblz4 on the host, pass a list of arrays");
  const Device where = host ? *device : cuda_device_of(data, what);
  if (!host && device && !(*device == where))
    throw Error(Errc::invalid_argument, what, "the data lives on " + where.id() + ", not on " + device->id());
  BatchItems out{where, !host, {}};
  const auto* base = static_cast<const std::uint8_t*>(data.data());
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i)
    out.views.emplace_back(where, base + offsets[i], offsets[i + 1] - offsets[i]);
  return out;
}

nb::tuple packed_results(const BatchItems& batch, const ops::Lz4Batch& results) {
  const BufferView<const std::uint8_t> all = results.bytes.view().subview(0, results.offsets.back());
  nb::object bytes;
  if (batch.gpu) {
    bytes = to_device_array(batch.device, all);
  } else {
    auto array = host_array(1, all.size());  // host-memory backend: the view's bytes are host bytes
    if (!all.empty()) all.copy_to(std::span<std::uint8_t>(array.data(), all.size()));
    bytes = nb::cast(array);
  }
  auto* offsets = new std::uint64_t[results.offsets.size()];
  std::copy(results.offsets.begin(), results.offsets.end(), offsets);
  nb::capsule owner(offsets, [](void* p) noexcept { delete[] static_cast<std::uint64_t*>(p); });
  const std::size_t count = results.offsets.size();
  return nb::make_tuple(bytes, nb::ndarray<nb::numpy, std::uint64_t>(offsets, 1, &count, owner));
}

std::span<const std::uint64_t> offsets_of(const HostOffsets& offsets) {
  return {offsets.data(), offsets.shape(0)};
}

nb::tuple compress_packed(const AnyArray& data, const HostOffsets& offsets, unsigned block_size_id,
                          bool block_checksums, bool content_checksum, bool content_size,
                          const std::optional<Device>& device) {
  const ops::Lz4CompressOptions options =
      compress_options(block_size_id, block_checksums, content_checksum, content_size);
  const BatchItems batch = packed_items(data, offsets_of(offsets), device, "lz4_compress");
  return packed_results(batch, compressed(batch, options));
}

nb::tuple decompress_packed(const AnyArray& frames, const HostOffsets& offsets, std::size_t max_size, bool verify,
                            const std::optional<Device>& device) {
  const BatchItems batch = packed_items(frames, offsets_of(offsets), device, "lz4_decompress");
  return packed_results(batch, decompressed(batch, max_size, verify));
}

}  // namespace

void bind_lz4(nb::module_& m) {
  m.def("lz4_compress", &compress, "data"_a, "block_size_id"_a, "block_checksums"_a, "content_checksum"_a,
        "content_size"_a, "device"_a.none());
  m.def("lz4_decompress", &decompress, "frames"_a, "max_size"_a, "verify"_a, "device"_a.none());
  m.def("lz4_compress_batch", &compress_batch, "items"_a, "block_size_id"_a, "block_checksums"_a, "content_checksum"_a,
        "content_size"_a, "device"_a.none());
  m.def("lz4_decompress_batch", &decompress_batch, "items"_a, "max_size"_a, "verify"_a, "device"_a.none());
  m.def("lz4_compress_packed", &compress_packed, "data"_a, "offsets"_a, "block_size_id"_a, "block_checksums"_a,
        "content_checksum"_a, "content_size"_a, "device"_a.none(),
        "One frame per item data[offsets[i]:offsets[i + 1]] of a 1-D uint8 array (CUDA, or host with a host-memory "
        "device), one batch call: (every frame back to back, NumPy uint64 offsets of the frames).");
  m.def("lz4_decompress_packed", &decompress_packed, "frames"_a, "offsets"_a, "max_size"_a, "verify"_a,
        "device"_a.none(),
        "The data of each item frames[offsets[i]:offsets[i + 1]], one batch call: (the results back to back, NumPy "
        "uint64 offsets of the results); max_size applies to each item.");
  m.attr("lz4_default_max_output") = ops::lz4_default_max_output;
}

}  // namespace opkit::python
