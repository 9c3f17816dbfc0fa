// Content checksums of device bytes: chunked copies one ahead of the hash (content_checksum.hpp).
#include "content_checksum.hpp"

#include <xxhash.h>

#include <algorithm>
#include <memory>

#include "opkit/error.hpp"

namespace opkit::ops::lz4 {

std::uint32_t device_content_checksum(BufferView<const std::uint8_t> data, const std::atomic<bool>* stop) {
  const std::size_t bytes = data.size();
  if (bytes == 0) return static_cast<std::uint32_t>(XXH32(nullptr, 0, 0));
  const std::size_t chunk = std::min(bytes, content_checksum_chunk_bytes);
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  const std::unique_ptr<std::uint8_t[]> buffers[2] = {
      std::make_unique_for_overwrite<std::uint8_t[]>(chunk),
      chunks > 1 ? std::make_unique_for_overwrite<std::uint8_t[]>(chunk) : nullptr};
  const std::unique_ptr<XXH32_state_t, decltype(&XXH32_freeState)> state(XXH32_createState(), &XXH32_freeState);
  if (!state) throw Error(Errc::memory, "lz4 content checksum", "out of host memory for the XXH32 state");
  XXH32_reset(state.get(), 0);
  const auto length = [&](std::size_t k) { return std::min(chunk, bytes - k * chunk); };
  const auto fetch = [&](std::size_t k) {
    data.subview(k * chunk, length(k)).copy_to(std::span<std::uint8_t>(buffers[k % 2].get(), length(k)));
  };
  // One copy in flight at a time, into the buffer that is not being hashed; get() rethrows a
  // failed copy, and no copy is left running when this returns or throws.
  std::future<void> landed = std::async(std::launch::deferred, fetch, 0);
  for (std::size_t k = 0; k < chunks; ++k) {
    landed.get();
    if (stop != nullptr && stop->load()) return 0;
    if (k + 1 < chunks) landed = std::async(std::launch::async, fetch, k + 1);
    XXH32_update(state.get(), buffers[k % 2].get(), length(k));
  }
  return static_cast<std::uint32_t>(XXH32_digest(state.get()));
}

ContentChecksums::ContentChecksums(std::span<const BufferView<const std::uint8_t>> items)
    : sums_(std::async(std::launch::async, [this, items] {
        std::vector<std::uint32_t> sums;
        sums.reserve(items.size());
        for (const BufferView<const std::uint8_t>& item : items) {
          if (stop_.load()) break;
          sums.push_back(device_content_checksum(item, &stop_));
        }
        return sums;
      })) {}

ContentChecksums::~ContentChecksums() {
  stop_.store(true);
  if (sums_.valid()) sums_.wait();
}

std::vector<std::uint32_t> ContentChecksums::get() {
  return sums_.get();
}

}  // namespace opkit::ops::lz4
