// DeviceFrameScan: the structure of frames in device memory (the ParsedInput that parse_frames
// gives for a host copy), without copying the frames to the host. The lz4_frame_scan kernel walks
// each item's block headers on the device and sends back the bytes where the parser will read
// (about 32 bytes per block); FrameScanner then checks them on the host exactly as it checks a
// buffer, so errors and messages are the same. A read the walk did not predict (where a corrupt
// frame goes wrong) is copied from device memory on demand.
#pragma once

#include <span>
#include <vector>

#include "lz4/device_lz4.hpp"
#include "lz4/frame_format.hpp"
#include "opkit/buffer.hpp"

namespace opkit::ops::lz4 {

class DeviceFrameScan {
 public:
  // One walk for the whole batch (two when the first has too little room for its records).
  DeviceFrameScan(const DeviceLz4& engine, std::span<const BufferView<const std::uint8_t>> items);
  // Item i's structure; throws as parse_frames does for the same bytes.
  ParsedInput parse(std::size_t item);
  // Reads served from device memory rather than the walk's records (0 for valid frames).
  std::size_t fallback_reads() const { return fallbacks_; }
  std::size_t records() const { return scan_.records.size(); }  // what the walk sent back

 private:
  std::span<const BufferView<const std::uint8_t>> items_;
  DeviceLz4::Scan scan_;
  std::size_t fallbacks_ = 0;
};

}  // namespace opkit::ops::lz4
