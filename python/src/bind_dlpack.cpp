// DLPack import and export: array_info() tells the Python layer where a consumed array lives
// (address, device, shape) so that kernels can take framework tensors zero-copy, and
// device_array()/host_array() give opkit-owned memory a DLPack face.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "opkit/backend.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {

bool on_host(const AnyArray& array) {
  return array.device_type() == dl_cpu || array.device_type() == dl_cuda_host;
}

Device cuda_device_of(const AnyArray& array, const char* what) {
  if (array.device_type() != dl_cuda && array.device_type() != dl_cuda_managed)
    throw Error(Errc::invalid_argument, what,
                "opkit cannot reach memory of DLPack device type " + std::to_string(array.device_type()) +
                    " (it reads host memory and CUDA device memory)");
  return Device::cuda(array.device_id());
}

void require_contiguous(const AnyArray& array, const char* what) {
  if (array.size() == 0) return;  // no element to misplace; producers give such arrays any strides
  std::int64_t expected = 1;
  for (std::size_t i = array.ndim(); i-- > 0;) {
    if (array.shape(i) != 1 && array.stride(i) != expected)
      throw Error(Errc::invalid_argument, what,
                  "the array is not C-contiguous (make it so first, e.g. x.contiguous() or numpy.ascontiguousarray)");
    expected *= static_cast<std::int64_t>(array.shape(i));
  }
}

void require_dtype(const AnyArray& array, std::uint8_t bits, bool unsigned_only, const char* what) {
  nb::dlpack::dtype dt = array.dtype();
  bool integer = dt.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) ||
                 (!unsigned_only && dt.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int));
  if (!integer || dt.bits != bits || dt.lanes != 1) {
    const char* kinds[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
    const std::string got =
        (dt.code < std::size(kinds) ? std::string(kinds[dt.code]) : "type code " + std::to_string(dt.code)) +
        std::to_string(dt.bits) + (dt.lanes != 1 ? " x" + std::to_string(dt.lanes) : "");
    const std::string n = std::to_string(bits);
    const std::string want = unsigned_only ? "uint" + n : "int" + n + " or uint" + n;
    throw Error(Errc::invalid_argument, what,
                "expected " + want + " elements, got " + got + " (convert them first, e.g. x.astype(\"" +
                    (unsigned_only || bits == 8 ? "uint" : "int") + n + "\"))");
  }
}

nb::ndarray<nb::array_api> device_array(const Device& device, const std::vector<std::size_t>& shape,
                                        nb::dlpack::dtype dtype, void** data_out) {
  if (dtype.lanes != 1 || dtype.bits == 0 || dtype.bits % 8 != 0)
    throw Error(Errc::invalid_argument, "device_array", "only whole-byte, single-lane element types are supported");
  std::size_t bytes = dtype.bits / 8;
  for (std::size_t extent : shape) bytes *= extent;
  auto buffer = std::make_unique<DeviceBuffer<std::uint8_t>>(device, bytes == 0 ? 1 : bytes);
  void* data = buffer->data();
  nb::capsule owner(buffer.get(), [](void* p) noexcept { delete static_cast<DeviceBuffer<std::uint8_t>*>(p); });
  static_cast<void>(buffer.release());  // the capsule owns the buffer now
  *data_out = data;
  const int type = find_backend(device.backend())->dlpack_device_type();
  return nb::ndarray<nb::array_api>(data, shape.size(), shape.data(), owner, nullptr, dtype, type,
                                    type == dl_cpu ? 0 : device.info().ordinal);
}

nb::ndarray<nb::numpy, std::uint8_t> host_array(std::size_t rows, std::size_t columns) {
  auto storage = std::make_unique<std::uint8_t[]>(rows * columns == 0 ? 1 : rows * columns);
  std::uint8_t* data = storage.get();
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<std::uint8_t*>(p); });
  storage.release();
  std::size_t shape[2] = {rows, columns};
  return nb::ndarray<nb::numpy, std::uint8_t>(data, 2, shape, owner);
}

void bind_dlpack(nb::module_& m) {
  m.def(
      "array_info",
      [](AnyArray array) {
        std::vector<std::int64_t> shape, strides;
        for (std::size_t i = 0; i < array.ndim(); ++i) {
          shape.push_back(static_cast<std::int64_t>(array.shape(i)));
          strides.push_back(array.stride(i));
        }
        nb::dlpack::dtype dt = array.dtype();
        return nb::make_tuple(reinterpret_cast<std::uintptr_t>(array.data()), array.device_type(), array.device_id(),
                              nb::cast(shape), nb::cast(strides), nb::make_tuple(dt.code, dt.bits, dt.lanes));
      },
      "capsule"_a,
      "(address, DLPack device type, device id, shape, strides in elements, (dtype code, bits, lanes)) of a DLPack "
      "capsule. The address stays valid while the producer's array lives.");

  m.def(
      "empty",
      [](const Device& device, const std::vector<std::size_t>& shape, std::uint8_t code, std::uint8_t bits) {
        void* data = nullptr;
        return device_array(device, shape, nb::dlpack::dtype{code, bits, 1}, &data);
      },
      "device"_a, "shape"_a, "dtype_code"_a, "dtype_bits"_a,
      "An uninitialised C-contiguous array on the device, with a DLPack face (DLPack dtype code and bits).");
}

}  // namespace opkit::python
