// parse_frames: the structure of concatenated LZ4 frames (standard, skippable, legacy), checked
// byte by byte before any block is decoded, so that decoders see only sizes that fit the input.
#include <xxhash.h>

#include <cstdio>

#include "lz4/frame_format.hpp"
#include "opkit/error.hpp"

namespace opkit::ops::lz4 {
namespace {

[[noreturn]] void fail(const std::string& location, const std::string& problem) {
  throw Error(Errc::invalid_argument, "lz4 frame", location + ": " + problem);
}

bool is_skippable(std::uint32_t magic) {
  return (magic & skippable_magic_mask) == skippable_magic_min;
}

class FrameParser {
 public:
  explicit FrameParser(std::span<const std::uint8_t> input) : in_(input) {}

  ParsedInput parse() {
    while (pos_ < in_.size()) {
      const std::size_t start = pos_;
      const std::uint32_t magic = take32(where(frame(), start), "magic number");
      if (magic == frame_magic)
        parse_lz4(start);
      else if (magic == legacy_magic)
        parse_legacy(start);
      else if (is_skippable(magic))
        parse_skippable(start);
      else
        fail(where(frame(), start), "not an LZ4 frame (magic number " + hex(magic) + ")");
      out_.frames.back().bytes = pos_ - start;
    }
    return std::move(out_);
  }

 private:
  std::size_t frame() const { return out_.frames.size(); }
  std::size_t left() const { return in_.size() - pos_; }

  static std::string hex(std::uint32_t v) {
    char text[16];
    std::snprintf(text, sizeof text, "0x%08X", v);
    return text;
  }

  void need(std::size_t bytes, const std::string& location, const char* what) const {
    if (left() < bytes)
      fail(location, std::string("truncated: ") + what + " needs " + std::to_string(bytes) + " bytes, " +
                         std::to_string(left()) + " left at input byte " + std::to_string(pos_));
  }
  std::uint32_t take32(const std::string& location, const char* what) {
    need(4, location, what);
    const std::uint32_t v = read_le32(in_.data() + pos_);
    pos_ += 4;
    return v;
  }

  FrameRef& begin_frame(FrameKind kind, std::size_t start) {
    FrameRef& f = out_.frames.emplace_back();
    f.kind = kind;
    f.offset = start;
    f.first_block = out_.blocks.size();
    return f;
  }

  void parse_skippable(std::size_t start) {
    begin_frame(FrameKind::skippable, start);
    const std::uint32_t size = take32(where(frame() - 1, start), "skippable frame size");
    need(size, where(frame() - 1, start), "skippable frame data");
    pos_ += size;
  }

 public:
  // The frame header alone: the content size of an LZ4 frame, nullopt for other frames.
  std::optional<std::uint64_t> content_size() {
    const std::uint32_t magic = take32(where(0, 0), "magic number");
    if (magic != frame_magic) {
      if (magic != legacy_magic && !is_skippable(magic))
        fail(where(0, 0), "not an LZ4 frame (magic number " + hex(magic) + ")");
      return std::nullopt;
    }
    return parse_descriptor(0).content_size;
  }

 private:
  // The descriptor after the magic number at `start`, checked; pos_ moves past it.
  FrameSettings parse_descriptor(std::size_t start) {
    const std::string at = where(frame(), start);
    need(3, at, "frame descriptor");
    const std::uint8_t flg = in_[pos_], bd = in_[pos_ + 1];
    if ((flg & flg_version_mask) != flg_version_01)
      fail(at, "unsupported frame version " + std::to_string(flg >> 6) + " (FLG byte " + std::to_string(flg) + ")");
    if ((flg & flg_reserved) != 0) fail(at, "reserved FLG bit 1 is set");
    if ((bd & 0x8F) != 0) fail(at, "reserved BD bits are set (BD byte " + std::to_string(bd) + ")");
    const unsigned id = (bd >> 4) & 7u;
    if (id < 4) fail(at, "block maximum size id " + std::to_string(id) + " is not 4..7");
    const std::size_t descriptor = 2 + ((flg & flg_content_size) ? 8 : 0) + ((flg & flg_dict_id) ? 4 : 0);
    need(descriptor + 1, at, "frame descriptor");
    const std::uint8_t* d = in_.data() + pos_;
    const auto header_checksum = static_cast<std::uint8_t>((XXH32(d, descriptor, 0) >> 8) & 0xFF);
    if (header_checksum != d[descriptor])
      fail(at, "header checksum " + std::to_string(d[descriptor]) + " does not match the descriptor (" +
                   std::to_string(header_checksum) + ")");
    if (flg & flg_dict_id)
      fail(at, "the frame needs dictionary " + hex(read_le32(d + descriptor - 4)) + ", none given");
    FrameSettings settings;
    settings.block_size_id = id;
    settings.independent = (flg & flg_block_independent) != 0;
    settings.block_checksums = (flg & flg_block_checksum) != 0;
    settings.content_checksum = (flg & flg_content_checksum) != 0;
    if (flg & flg_content_size)
      settings.content_size = std::uint64_t{read_le32(d + 2)} | (std::uint64_t{read_le32(d + 6)} << 32);
    pos_ += descriptor + 1;
    return settings;
  }

  void parse_lz4(std::size_t start) {
    const std::string at = where(frame(), start);
    const FrameSettings settings = parse_descriptor(start);
    FrameRef& f = begin_frame(FrameKind::lz4, start);
    f.settings = settings;
    const unsigned id = settings.block_size_id;
    const std::size_t max = block_max_bytes(id);
    const std::size_t frame_index = frame() - 1;
    for (std::size_t index = 0;; ++index) {
      const std::size_t block_start = pos_;
      const std::string bat = "frame " + std::to_string(frame_index) + ", block " + std::to_string(index) +
                              " (input byte " + std::to_string(block_start) + ")";
      const std::uint32_t word = take32(bat, "block size");
      if (word == 0) break;  // EndMark
      const std::uint32_t stored = word & ~uncompressed_bit;
      if (stored == 0) fail(bat, "raw block of 0 bytes (only the EndMark 0x00000000 may be empty)");
      if (stored > max)
        fail(bat,
             "block of " + std::to_string(stored) + " bytes exceeds the frame's maximum of " + std::to_string(max));
      const std::size_t trailer = f.settings.block_checksums ? 4 : 0;
      need(std::size_t{stored} + trailer, bat, "block data");
      BlockRef& b = out_.blocks.emplace_back();
      b.frame = frame_index;
      b.index = index;
      b.offset = pos_;
      b.stored = stored;
      b.raw = (word & uncompressed_bit) != 0;
      b.max_decoded = max;
      pos_ += stored;
      if (trailer) b.checksum = take32(bat, "block checksum");
    }
    if (f.settings.content_checksum) f.content_checksum = take32(at, "content checksum");
    f.block_count = out_.blocks.size() - f.first_block;
  }

  // `lz4 -l`: 8 MiB independent compressed blocks, no end mark; the frame ends at the end of the
  // input or where the next size word reads as a magic number (as the lz4 tool decides).
  void parse_legacy(std::size_t start) {
    FrameRef& f = begin_frame(FrameKind::legacy, start);
    f.settings.content_checksum = false;
    const std::size_t frame_index = frame() - 1;
    const std::size_t limit = compress_bound(legacy_block_bytes);
    for (std::size_t index = 0; pos_ < in_.size(); ++index) {
      const std::string bat = "frame " + std::to_string(frame_index) + ", block " + std::to_string(index) +
                              " (input byte " + std::to_string(pos_) + ")";
      need(4, bat, "legacy block size");
      const std::uint32_t word = read_le32(in_.data() + pos_);
      if (word == frame_magic || word == legacy_magic || is_skippable(word)) break;
      pos_ += 4;
      if (word == 0 || word > limit)
        fail(bat, "legacy block size " + std::to_string(word) + " is not 1.." + std::to_string(limit));
      need(word, bat, "legacy block data");
      BlockRef& b = out_.blocks.emplace_back();
      b.frame = frame_index;
      b.index = index;
      b.offset = pos_;
      b.stored = word;
      b.max_decoded = legacy_block_bytes;
      pos_ += word;
    }
    out_.frames.back().block_count = out_.blocks.size() - out_.frames.back().first_block;
  }

  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  ParsedInput out_;
};

}  // namespace

ParsedInput parse_frames(std::span<const std::uint8_t> input) {
  return FrameParser(input).parse();
}

std::optional<std::uint64_t> header_content_size(std::span<const std::uint8_t> header) {
  return FrameParser(header).content_size();
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
