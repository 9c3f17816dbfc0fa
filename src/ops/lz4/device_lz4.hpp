// DeviceLz4: the LZ4 kernels of one device as device-resident steps (data already in device
// memory, results left there). The kernel engine (kernel_codec.cpp) moves host data through
// them; bench/lz4_bench.cpp times them with events.
#pragma once

#include <memory>
#include <span>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/stream.hpp"
#include "lz4/frame_format.hpp"

namespace opkit::ops::lz4 {

struct DeviceKernels;

class DeviceLz4 {
 public:
  explicit DeviceLz4(Device device);  // compiles the kernels on the device's first use
  const Device& device() const { return device_; }

  // The packed block section of a frame (size words, stored bytes, optional block checksums;
  // no end mark) for `in` in blocks of block_bytes: `size` bytes of `bytes`. Waits for the block
  // sizes (one small copy to the host) to lay the section out.
  struct Section {
    DeviceBuffer<std::uint8_t> bytes;
    std::size_t size = 0;
  };
  Section encode(BufferView<const std::uint8_t> in, std::size_t block_bytes, bool block_checksums,
                 const Stream* stream = nullptr) const;

  // Where each block to decode lies: block i reads in[in_at[i], + in_len[i] & 0x7FFFFFFF) (bit 31:
  // raw) and writes out[out_at[i], + caps[i]).
  struct BlockTable {
    DeviceBuffer<unsigned long long> in_at, out_at;
    DeviceBuffer<std::uint32_t> in_len, caps;
    std::size_t count = 0;
  };
  // The table for consecutive blocks of one input, `lo` being the input offset at in[0].
  BlockTable table(std::span<const BlockRef> blocks, std::size_t lo, std::span<const std::size_t> slot_offsets) const;

  // Decoded sizes and LZ4K_* statuses (kernels/lz4_status.h) per block.
  void decode(BufferView<const std::uint8_t> in, const BlockTable& table, BufferView<std::uint8_t> out,
              BufferView<std::uint32_t> sizes, BufferView<std::uint32_t> status, const Stream* stream = nullptr) const;
  // xxHash32 of each block's stored bytes.
  void hash(BufferView<const std::uint8_t> in, const BlockTable& table, BufferView<std::uint32_t> hashes,
            const Stream* stream = nullptr) const;

 private:
  Device device_;
  std::shared_ptr<const DeviceKernels> k_;
};

}  // namespace opkit::ops::lz4
