// AesKernels: the embedded AES kernel source, compiled once per device and kept for the process.
#include "aes_kernels.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "opkit_embedded.hpp"
#include "opkit/error.hpp"
#include "opkit/module.hpp"

namespace opkit::ops::aes {
namespace {

std::string embedded(const std::string& name) {
  std::string_view text = opkit::detail::embedded_source(("cipher/" + name).c_str());
  if (text.empty()) throw Error(Errc::not_found, "aes", "kernel source cipher/" + name + " is not embedded");
  return std::string(text);
}

}  // namespace

Program aes_program() {
  Program program(embedded("aes.cu"));
  program.name("aes.cu");
  for (const char* header : {"aes_bitslice.cuh", "aes_gf128.cuh", "aes_key.cuh", "aes_state.cuh"})
    program.header(header, embedded(header));
  return program;
}

const AesKernels& aes_kernels(const Device& device) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const AesKernels>> by_device;  // by Device::id()
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = by_device[device.id()];
  if (!slot) {
    const Module module = device.compile(aes_program());
    slot = std::make_unique<const AesKernels>(AesKernels{module.kernel("aes_setup"), module.kernel("aes_ctr"),
                                                         module.kernel("aes_ctr_masked"), module.kernel("aes_ghash"),
                                                         module.kernel("aes_gcm_tag")});
  }
  return *slot;
}

}  // namespace opkit::ops::aes
