// BlockCodec: what differs between the engines (liblz4 on the host, opkit's kernels on a
// device): compressing a run of equal blocks into a frame's block section, and decoding a run
// of independent blocks into slots. Framing, limits and the content checksum stay in lz4.cpp.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "lz4/frame_format.hpp"
#include "opkit/device.hpp"

namespace opkit::ops::lz4 {

class BlockCodec {
 public:
  virtual ~BlockCodec() = default;
  // Appends input's blocks of block_bytes (the last may be shorter) to section: for each, its
  // size word (bit 31: stored raw, where compression does not shrink it), its stored bytes and,
  // with block_checksums, the xxHash32 of those.
  virtual void encode(std::span<const std::uint8_t> input, std::size_t block_bytes, bool block_checksums,
                      std::vector<std::uint8_t>& section) = 0;
  // Decodes blocks (independent, in input order, consecutive in the input) into
  // slots[slot_offsets[i], slot_offsets[i + 1]) and returns their decoded sizes. input[0] is
  // input byte input_base (blocks' offsets count from the input's start: a stream's window
  // holds only part of it). With verify, checks every block checksum present. Throws naming the
  // first bad block.
  virtual std::vector<std::size_t> decode(std::span<const std::uint8_t> input, std::size_t input_base,
                                          std::span<const BlockRef> blocks, std::span<const std::size_t> slot_offsets,
                                          std::span<std::uint8_t> slots, bool verify) = 0;
};

std::unique_ptr<BlockCodec> host_block_codec();
// The device engine; its kernels compile once per device and stay for the process.
std::unique_ptr<BlockCodec> kernel_block_codec(const Device& device);

// A kernel source (lz4_compress.cu, lz4_decompress.cu, lz4_xxh32.cu, lz4_gather.cu) with its
// headers, as the device engine compiles it (for NVRTC tests and SASS dumps).
Program kernel_program(const std::string& file);

// The one error a bad block gets: "lz4 frame: frame 0, block 3 (input byte 123): <problem>".
[[noreturn]] void throw_block_error(const BlockRef& block, const std::string& problem);
std::string checksum_problem(std::uint32_t expected, std::uint32_t actual);
std::string content_size_problem(std::uint64_t declared, std::size_t produced);
std::string content_checksum_problem(std::uint32_t expected, std::uint32_t actual);
// What a kernel status (kernels/lz4_status.h) means for a block of capacity `cap`.
std::string status_problem(unsigned status, std::size_t cap);

}  // namespace opkit::ops::lz4
