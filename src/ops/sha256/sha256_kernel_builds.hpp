// How many SHA-256 kernels Sha256Kernel has built (compiled or fetched from the module cache)
// since the process started; a call with the parameters of an earlier one builds none. For tests.
#pragma once

#include <cstddef>

namespace opkit::ops::detail {

std::size_t sha256_kernel_builds();

}  // namespace opkit::ops::detail
