// parse_frames and header_content_size: a whole input through FrameScanner; and the small
// helpers every part of the frame codec shares (locations, little-endian words, xxHash32).
#include <xxhash.h>

#include "lz4/frame_format.hpp"
#include "lz4/frame_scanner.hpp"
#include "opkit/error.hpp"

namespace opkit::ops::lz4 {

ParsedInput parse_frames(std::span<const std::uint8_t> input) {
  WindowBytes bytes(input, 0, true);
  return parse_frames(bytes);
}

ParsedInput parse_frames(FrameBytes& bytes) {
  FrameScanner scanner;
  ParsedInput out;
  for (;;) {
    switch (scanner.next(bytes)) {
      case FrameScanner::Step::frame:
        out.frames.push_back(scanner.frame());
        out.frames.back().first_block = out.blocks.size();
        break;
      case FrameScanner::Step::block:
        out.blocks.push_back(scanner.block());
        break;
      case FrameScanner::Step::frame_end: {
        const std::size_t first = out.frames.back().first_block;
        out.frames.back() = scanner.frame();
        out.frames.back().first_block = first;
        break;
      }
      case FrameScanner::Step::more:  // never: the input is complete
      case FrameScanner::Step::done:
        return out;
    }
  }
}

std::optional<std::uint64_t> header_content_size(std::span<const std::uint8_t> header) {
  WindowBytes bytes(header, 0, true);
  FrameScanner scanner;
  const FrameScanner::Step step = scanner.next(bytes);
  if (step == FrameScanner::Step::done)  // an empty header, which the scanner takes for an empty input
    throw Error(Errc::invalid_argument, "lz4 frame",
                where(0, 0) + ": truncated: magic number needs 4 bytes, 0 left at input byte 0");
  if (step != FrameScanner::Step::frame || scanner.frame().kind != FrameKind::lz4) return std::nullopt;
  return scanner.frame().settings.content_size;
}

std::string where(std::size_t frame, std::size_t offset) {
  return "frame " + std::to_string(frame) + " (input byte " + std::to_string(offset) + ")";
}

std::string where(const BlockRef& block) {
  return "frame " + std::to_string(block.frame) + ", block " + std::to_string(block.index) + " (input byte " +
         std::to_string(block.offset - 4) + ")";
}

std::uint32_t read_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}

std::uint32_t xxh32(std::span<const std::uint8_t> data) {
  return XXH32(data.data(), data.size(), 0);
}

}  // namespace opkit::ops::lz4
