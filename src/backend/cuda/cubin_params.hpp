// The parameter list of each kernel of a cubin, read from the ELF's .nv.info.<kernel> sections
// (EIATTR_KPARAM_INFO records), so that launches are checked without asking the driver past the
// last parameter: cuFuncGetParamInfo answers CUDA_ERROR_INVALID_VALUE there, which
// compute-sanitizer reports as an API error in every program that uses opkit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace opkit::cuda {

// Kernel symbol -> size in bytes of each parameter, in order. Kernels whose records cannot be
// read are absent (their parameters are then unknown); a damaged or non-ELF image gives an empty
// map, never an out-of-bounds read.
std::map<std::string, std::vector<std::size_t>> cubin_param_sizes(std::span<const std::uint8_t> image);

}  // namespace opkit::cuda
