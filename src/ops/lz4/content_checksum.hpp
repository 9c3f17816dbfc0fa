// The LZ4 frame's content checksum (XXH32 of the whole content, seed 0) of bytes in device
// memory. XXH32 is one sequential pass, so it runs on the host: the bytes come down a chunk at a
// time, the next chunk copied while the last is hashed, into two chunk-sized buffers rather than a
// host copy of the whole content (which cost a page fault per 4 KiB before the copy began).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <future>
#include <span>
#include <vector>

#include "opkit/buffer.hpp"

namespace opkit::ops::lz4 {

inline constexpr std::size_t content_checksum_chunk_bytes = std::size_t{8} << 20;

// XXH32 of `data`, read through its device's ordinary copies (ordered after the work queued
// before them, as any download). When `stop` becomes true it returns early, after the chunk at
// hand, with a value of no meaning.
std::uint32_t device_content_checksum(BufferView<const std::uint8_t> data, const std::atomic<bool>* stop = nullptr);

// The checksums of every item, computed on a thread of their own from construction on, so that
// the caller goes on (launching the compress kernels) while the bytes come down and are hashed.
// Destroying it before get() (an error or Ctrl-C in the caller) stops that thread after its
// current chunk and waits for it.
class ContentChecksums {
 public:
  explicit ContentChecksums(std::span<const BufferView<const std::uint8_t>> items);
  ~ContentChecksums();
  ContentChecksums(const ContentChecksums&) = delete;
  ContentChecksums& operator=(const ContentChecksums&) = delete;

  std::vector<std::uint32_t> get();  // once; rethrows the thread's error

 private:
  std::atomic<bool> stop_{false};
  std::future<std::vector<std::uint32_t>> sums_;
};

}  // namespace opkit::ops::lz4
