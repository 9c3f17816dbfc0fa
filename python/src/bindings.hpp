// The pieces of the nanobind module opkit._opkit, one function per concept; module.cpp calls them
// in order (errors first, so every later binding can raise opkit.Error).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>

#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::python {

void bind_errors(nanobind::module_& m);
void bind_device(nanobind::module_& m);
void bind_memory(nanobind::module_& m);
void bind_program(nanobind::module_& m);
void bind_dlpack(nanobind::module_& m);
void bind_sha256(nanobind::module_& m);
void bind_cipher(nanobind::module_& m);
void bind_mine(nanobind::module_& m);
void bind_doctor(nanobind::module_& m);
void bind_lz4(nanobind::module_& m);

// Device memory addresses travel through Python as integers (PyCUDA's convention).
inline void* address(std::uintptr_t value) {
  return reinterpret_cast<void*>(value);  // NOLINT(performance-no-int-to-ptr): the integer is an address
}

}  // namespace opkit::python
