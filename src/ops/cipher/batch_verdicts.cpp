#include "batch_verdicts.hpp"

#include <span>

#include "device_secret.hpp"

namespace opkit::ops::detail {

BatchVerdicts::BatchVerdicts(const Device& device, std::size_t count, const Stream* stream)
    : device_(device),
      count_(count),
      verdicts_(call_scratch<std::uint8_t>(device, count, stream)),
      failures_(call_scratch<std::uint64_t>(device, 1, stream)) {
  failures_.fill(0, stream);
}

std::vector<std::size_t> BatchVerdicts::failed(const Stream* stream) const {
  std::uint64_t failed_count = 0;
  failures_.view().copy_to(std::span<std::uint64_t>(&failed_count, 1), stream);
  synchronize(device_, stream);
  std::vector<std::size_t> failed;
  if (failed_count == 0) return failed;
  std::vector<std::uint8_t> host(count_);
  verdicts_.view().subview(0, count_).copy_to(std::span<std::uint8_t>(host), stream);
  synchronize(device_, stream);
  failed.reserve(failed_count);
  for (std::size_t i = 0; i < count_; ++i)
    if (host[i] != 1) failed.push_back(i);
  return failed;
}

}  // namespace opkit::ops::detail
