// Recognising prebuilt CUDA binaries (Backend::recognize_binary): a cubin, which is an ELF image
// for machine EM_CUDA, or PTX text. What is read from them is only what loading needs (the
// format, the target for messages, the kernel symbols); the driver validates the rest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "opkit/program.hpp"

namespace opkit::cuda {

// nullopt when `bytes` are neither a cubin nor PTX. Never reads out of bounds on damaged input.
std::optional<CompiledProgram> recognize_cuda_binary(std::vector<std::uint8_t> bytes, const std::string& name);

}  // namespace opkit::cuda
