// FrameScanner: the one walk over the structure of concatenated LZ4 frames (standard, skippable,
// legacy), element by element, checking every byte of structure before a decoder sees a size.
// It reads through FrameBytes, so the same checks and messages serve a whole buffer
// (parse_frames), a stream read piece by piece (Lz4StreamDecoder: the scanner waits for more
// instead of calling a short window truncated) and device memory whose structure bytes a kernel
// gathered (device_scan.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "lz4/frame_format.hpp"

namespace opkit::ops::lz4 {

// The input as the scanner sees it: absolute offsets from the input's first byte.
class FrameBytes {
 public:
  virtual ~FrameBytes() = default;
  // Bytes before end() may be read (those before the scanner's position need not be kept).
  virtual std::size_t end() const = 0;
  // Whether end() is the end of the input; if not, more may come and the scanner waits.
  virtual bool complete() const = 0;
  // The n bytes at pos (pos + n <= end()); valid until the next read.
  virtual const std::uint8_t* read(std::size_t pos, std::size_t n) = 0;
};

// Input bytes [base, base + window.size()) in memory; complete: nothing follows them.
class WindowBytes final : public FrameBytes {
 public:
  WindowBytes(std::span<const std::uint8_t> window, std::size_t base, bool complete)
      : window_(window), base_(base), complete_(complete) {}
  std::size_t end() const override { return base_ + window_.size(); }
  bool complete() const override { return complete_; }
  const std::uint8_t* read(std::size_t pos, std::size_t) override { return window_.data() + (pos - base_); }

 private:
  std::span<const std::uint8_t> window_;
  std::size_t base_;
  bool complete_;
};

class FrameScanner {
 public:
  enum class Step : std::uint8_t {
    more,       // the next element is not wholly before end(): call again with more input
    frame,      // a frame began: frame() (lz4: its descriptor is checked; others: the magic read)
    block,      // a block, its data and checksum all before position(): block()
    frame_end,  // frame() ended: its bytes, block_count and content checksum are set
    done,       // the input is complete and every frame ended
  };
  // Scans the next element. Throws Error(invalid_argument) naming the frame, block and byte at
  // the first structural problem (truncation only once bytes.complete()).
  Step next(FrameBytes& bytes);

  const FrameRef& frame() const { return frame_; }
  std::size_t frame_index() const { return frames_ - 1; }  // of frame()
  const BlockRef& block() const { return block_; }
  // Every byte before it was scanned (and, except for a pending block's, is no longer needed).
  std::size_t position() const { return pos_; }

 private:
  enum class State : std::uint8_t { between, lz4_blocks, skip_size, skipping, legacy_blocks };
  Step begin_frame(FrameBytes& bytes);
  Step lz4_block(FrameBytes& bytes);
  Step legacy_block(FrameBytes& bytes);
  Step skip(FrameBytes& bytes);
  Step end_frame();

  State state_ = State::between;
  std::size_t pos_ = 0;
  std::size_t frames_ = 0;  // frames begun
  FrameRef frame_;
  BlockRef block_;
  std::size_t skip_from_ = 0, skip_left_ = 0;  // a skippable frame's data
};

// The whole structure of a complete input (parse_frames of a buffer is this over WindowBytes).
ParsedInput parse_frames(FrameBytes& bytes);

}  // namespace opkit::ops::lz4
