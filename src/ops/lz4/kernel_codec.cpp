// The device engine: host data goes up, DeviceLz4's kernels run, results come down. Statuses
// and checksums are checked on the host, so that a bad block gets the same message as on the
// host engine.
#include <algorithm>

#include "lz4/block_codec.hpp"
#include "lz4/device_lz4.hpp"
#include "lz4/kernels/lz4_status.h"

namespace opkit::ops::lz4 {

std::string status_problem(unsigned status, std::size_t cap) {
  switch (status) {
    case LZ4K_INPUT_TRUNCATED:
      return "corrupt LZ4 block: a length, offset or literal run reads past its end";
    case LZ4K_OUTPUT_OVERFLOW:
      return "corrupt LZ4 block: it decodes to more than " + std::to_string(cap) + " bytes";
    case LZ4K_BAD_OFFSET:
      return "corrupt LZ4 block: a match offset points before the block's start";
    case LZ4K_ZERO_OFFSET:  // liblz4 1.9 (the host engine) accepts it and copies undefined bytes
      return "corrupt LZ4 block: a match offset of 0 (the block format forbids it)";
    case LZ4K_ENDS_WITH_MATCH:
      return "corrupt LZ4 block: its last sequence is not literals only";
    case LZ4K_SHORT_TAIL:
      return "corrupt LZ4 block: a match too near its end (the last 5 bytes must be literals)";
    default:
      return "corrupt LZ4 block (status " + std::to_string(status) + ")";
  }
}

namespace {

class KernelCodec final : public BlockCodec {
 public:
  explicit KernelCodec(const Device& device) : lz4_(device) {}

  void encode(std::span<const std::uint8_t> input, std::size_t block_bytes, bool block_checksums,
              std::vector<std::uint8_t>& section) override {
    if (input.empty()) return;
    DeviceBuffer<std::uint8_t> in = lz4_.device().alloc<std::uint8_t>(input.size());
    in.copy_from(input);
    const DeviceLz4::Section packed = lz4_.encode(in, block_bytes, block_checksums);
    const std::size_t start = section.size();
    section.resize(start + packed.size);
    packed.bytes.view().subview(0, packed.size).copy_to(std::span<std::uint8_t>(section.data() + start, packed.size));
  }

  std::vector<std::size_t> decode(std::span<const std::uint8_t> input, std::size_t input_base,
                                  std::span<const BlockRef> blocks, std::span<const std::size_t> slot_offsets,
                                  std::span<std::uint8_t> slots, bool verify) override {
    const std::size_t count = blocks.size();
    if (count == 0) return {};
    const Device& device = lz4_.device();
    const std::size_t lo = blocks.front().offset, hi = blocks.back().offset + blocks.back().stored;
    DeviceBuffer<std::uint8_t> in = device.alloc<std::uint8_t>(hi - lo);
    in.copy_from(input.subspan(lo - input_base, hi - lo));
    const DeviceLz4::BlockTable table = lz4_.table(blocks, lo, slot_offsets);
    const bool any_checksum = std::any_of(blocks.begin(), blocks.end(), [](const BlockRef& b) { return b.checksum; });
    if (verify && any_checksum) {  // a block that fails its checksum is not decoded
      DeviceBuffer<std::uint32_t> d_hashes = device.alloc<std::uint32_t>(count);
      lz4_.hash(in.data(), table, d_hashes.data());
      const std::vector<std::uint32_t> hashes = download(d_hashes.view(), count);
      for (std::size_t i = 0; i < count; ++i)
        if (blocks[i].checksum && hashes[i] != *blocks[i].checksum)
          throw_block_error(blocks[i], checksum_problem(*blocks[i].checksum, hashes[i]));
    }
    DeviceBuffer<std::uint8_t> out = device.alloc<std::uint8_t>(std::max<std::size_t>(slots.size(), 1));
    DeviceBuffer<std::uint32_t> d_sizes = device.alloc<std::uint32_t>(count);
    DeviceBuffer<std::uint32_t> d_status = device.alloc<std::uint32_t>(count);
    lz4_.decode(in.data(), table, out.data(), d_sizes.data(), d_status.data());
    const std::vector<std::uint32_t> status = download(d_status.view(), count);
    for (std::size_t i = 0; i < count; ++i)
      if (status[i] != LZ4K_OK)
        throw_block_error(blocks[i], status_problem(status[i], slot_offsets[i + 1] - slot_offsets[i]));
    const std::vector<std::uint32_t> sizes = download(d_sizes.view(), count);
    // Only the decoded bytes come back: a short block's slot tail was never written (copying it
    // would hand the host stale device memory). Runs of full slots go in one copy, so a frame of
    // full blocks and a short last one takes one or two.
    const BufferView<std::uint8_t> decoded(out);
    std::size_t run = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t end = slot_offsets[i] + sizes[i];
      const bool full = end == slot_offsets[i + 1];
      if (!full || i + 1 == count) {
        if (end > run) decoded.subview(run, end - run).copy_to(slots.subspan(run, end - run));
        run = slot_offsets[i + 1];
      }
    }
    return {sizes.begin(), sizes.end()};
  }

 private:
  DeviceLz4 lz4_;
};

}  // namespace

std::unique_ptr<BlockCodec> kernel_block_codec(const Device& device) {
  return std::make_unique<KernelCodec>(device);
}

}  // namespace opkit::ops::lz4
