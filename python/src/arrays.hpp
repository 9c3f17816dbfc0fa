// Arrays crossing the Python boundary through DLPack: what an imported array is (where its memory
// lives, as an opkit Device for CUDA memory) and how opkit hands back memory it allocated.
#pragma once

#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"

namespace opkit::python {

// A borrowed array, read-only or writable (nanobind keeps the producer's tensor alive).
using AnyArray = nanobind::ndarray<nanobind::ro>;

// DLPack device types this module understands (dlpack.h).
inline constexpr int dl_cpu = 1, dl_cuda = 2, dl_cuda_host = 3, dl_cuda_managed = 13;

// Whether the array's memory is host memory any CPU code may read.
bool on_host(const AnyArray& array);
// The CUDA device that owns the array's memory (device or managed memory); throws
// Error(invalid_argument) for memory opkit cannot reach, naming the DLPack device type.
Device cuda_device_of(const AnyArray& array, const char* what);
// Throws Error(invalid_argument) unless the array is C-contiguous ("what" names it in the message).
void require_contiguous(const AnyArray& array, const char* what);
// Throws unless the dtype is an unsigned or signed integer of `bits` bits with one lane.
void require_dtype(const AnyArray& array, std::uint8_t bits, bool unsigned_only, const char* what);

// A C-contiguous array of `shape` and `dtype` over a new allocation on `device` (of at least one
// byte), freed when the last Python reference (or the consumer's DLPack tensor) lets go of it.
nanobind::ndarray<nanobind::array_api> device_array(const Device& device, const std::vector<std::size_t>& shape,
                                                    nanobind::dlpack::dtype dtype, void** data_out);
// A NumPy uint8 array of rows x columns, uninitialised.
nanobind::ndarray<nanobind::numpy, std::uint8_t> host_array(std::size_t rows, std::size_t columns);

}  // namespace opkit::python
