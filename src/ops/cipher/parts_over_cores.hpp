// Host copies and wipes of large key buffers over the host's cores: one core's memcpy or
// OPENSSL_cleanse does not keep up with the bus that the bytes go over next.
#pragma once

#include <algorithm>
#include <cstddef>

namespace opkit::ops::detail {

// f(from, n) over [0, bytes) in parts of `part` bytes, on several cores (OpenMP) once there are
// at least `parallel_from` parts, in order on this thread below that.
template <class F>
void parts_over_cores(std::size_t bytes, std::size_t part, std::size_t parallel_from, F&& f) {
  const auto parts = static_cast<std::ptrdiff_t>((bytes + part - 1) / part);
#pragma omp parallel for schedule(static) if (static_cast <std::size_t>(parts) >= parallel_from)
  for (std::ptrdiff_t p = 0; p < parts; ++p) {
    const std::size_t from = static_cast<std::size_t>(p) * part;
    f(from, std::min(part, bytes - from));
  }
}

}  // namespace opkit::ops::detail
