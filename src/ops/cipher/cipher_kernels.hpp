// The cipher operators' kernels on every backend that compiles CUDA C++: one kernel set
// (opkit::KernelSet) for the AES and ChaCha20 programs, so that each program compiles once per
// device and every later call reuses it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/program.hpp"

namespace opkit::ops::detail {

// One specialisation of the cipher programs: the key of the per-device kernel cache.
struct CipherProgram {
  enum class Source : std::uint8_t { aes, chacha20_bulk, chacha20_batch, secret_store, batch_iv_check };
  Source source = Source::aes;
  bool aead = false;     // chacha20_batch: Poly1305 tags
  bool aligned = false;  // chacha20: in, out (and every batch message) 16-byte aligned
  bool decrypt = false;  // chacha20 AEAD: authenticate the input rather than the output
  auto operator<=>(const CipherProgram&) const = default;
};

// The embedded kernel file cipher/<file> (Error not_found if the build left it out).
std::string cipher_source(const std::string& file);

const KernelSet<CipherProgram>& cipher_kernel_set();

// Kernel `name` of the program for `params`, compiled for `device` on first use.
inline Kernel cipher_kernel(const Device& device, const CipherProgram& params, std::string_view name) {
  return cipher_kernel_set().kernel(device, params, name);
}

}  // namespace opkit::ops::detail
