// FrameScanner (frame_scanner.hpp): each element (a frame header, a block with its data and
// checksum, an end mark with the content checksum, a legacy block) is checked whole before the
// position moves past it, so that a scan that has to wait for more input resumes where it was.
#include "lz4/frame_scanner.hpp"

#include <xxhash.h>

#include <cstdio>
#include <string>

#include "opkit/error.hpp"

namespace opkit::ops::lz4 {
namespace {

[[noreturn]] void fail(const std::string& location, const std::string& problem) {
  throw Error(Errc::invalid_argument, "lz4 frame", location + ": " + problem);
}

bool is_skippable(std::uint32_t magic) {
  return (magic & skippable_magic_mask) == skippable_magic_min;
}

std::string hex(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", v);
  return text;
}

std::string block_where(std::size_t frame, std::size_t index, std::size_t at) {
  return "frame " + std::to_string(frame) + ", block " + std::to_string(index) + " (input byte " + std::to_string(at) +
         ")";
}

// Whether the n bytes at pos are there. Not yet: false (the caller waits for more input); never,
// because the input is complete: the truncation error at `location()`.
template <class Where>
bool have(const FrameBytes& in, std::size_t pos, std::size_t n, Where&& location, const char* what) {
  const std::size_t left = in.end() - pos;
  if (left >= n) return true;
  if (!in.complete()) return false;
  fail(location(), std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " +
                       std::to_string(left) + " left at input byte " + std::to_string(pos));
}

std::uint32_t read32(FrameBytes& in, std::size_t pos) {
  return read_le32(in.read(pos, 4));
}

}  // namespace

FrameScanner::Step FrameScanner::next(FrameBytes& in) {
  switch (state_) {
    case State::between:
      return begin_frame(in);
    case State::lz4_blocks:
      return lz4_block(in);
    case State::skip_size:
    case State::skipping:
      return skip(in);
    case State::legacy_blocks:
      return legacy_block(in);
  }
  return Step::more;
}

FrameScanner::Step FrameScanner::begin_frame(FrameBytes& in) {
  if (pos_ == in.end()) return in.complete() ? Step::done : Step::more;
  const std::size_t start = pos_, index = frames_;
  const auto at = [&] { return where(index, start); };
  if (!have(in, start, 4, at, "magic number")) return Step::more;
  const std::uint32_t magic = read32(in, start);
  FrameRef f;
  f.offset = start;
  std::size_t next = start + 4;
  if (magic == frame_magic) {
    if (!have(in, next, 3, at, "frame descriptor")) return Step::more;
    const std::uint8_t* head = in.read(next, 3);
    const std::uint8_t flg = head[0], bd = head[1];
    if ((flg & flg_version_mask) != flg_version_01)
      fail(at(), "unsupported frame version " + std::to_string(flg >> 6) + " (FLG byte " + std::to_string(flg) + ")");
    if ((flg & flg_reserved) != 0) fail(at(), "reserved FLG bit 1 is set");
    if ((bd & 0x8F) != 0) fail(at(), "reserved BD bits are set (BD byte " + std::to_string(bd) + ")");
    const unsigned id = (bd >> 4) & 7u;
    if (id < 4) fail(at(), "block maximum size id " + std::to_string(id) + " is not 4..7");
    const std::size_t descriptor = 2 + ((flg & flg_content_size) ? 8 : 0) + ((flg & flg_dict_id) ? 4 : 0);
    if (!have(in, next, descriptor + 1, at, "frame descriptor")) return Step::more;
    const std::uint8_t* d = in.read(next, descriptor + 1);
    const auto header_checksum = static_cast<std::uint8_t>((XXH32(d, descriptor, 0) >> 8) & 0xFF);
    if (header_checksum != d[descriptor])
      fail(at(), "header checksum " + std::to_string(d[descriptor]) + " does not match the descriptor (" +
                     std::to_string(header_checksum) + ")");
    if (flg & flg_dict_id)
      fail(at(), "the frame needs dictionary " + hex(read_le32(d + descriptor - 4)) + ", none given");
    f.settings.block_size_id = id;
    f.settings.independent = (flg & flg_block_independent) != 0;
    f.settings.block_checksums = (flg & flg_block_checksum) != 0;
    f.settings.content_checksum = (flg & flg_content_checksum) != 0;
    if (flg & flg_content_size)
      f.settings.content_size = std::uint64_t{read_le32(d + 2)} | (std::uint64_t{read_le32(d + 6)} << 32);
    next += descriptor + 1;
    state_ = State::lz4_blocks;
  } else if (magic == legacy_magic) {
    f.kind = FrameKind::legacy;
    f.settings.content_checksum = false;
    state_ = State::legacy_blocks;
  } else if (is_skippable(magic)) {
    f.kind = FrameKind::skippable;
    state_ = State::skip_size;
  } else {
    fail(at(), "not an LZ4 frame (magic number " + hex(magic) + ")");
  }
  frame_ = f;
  ++frames_;
  pos_ = next;
  return Step::frame;
}

FrameScanner::Step FrameScanner::lz4_block(FrameBytes& in) {
  const std::size_t start = pos_, index = frame_.block_count;
  const auto bat = [&] { return block_where(frame_index(), index, start); };
  if (!have(in, start, 4, bat, "block size")) return Step::more;
  const std::uint32_t word = read32(in, start);
  if (word == 0) {  // EndMark, then the content checksum
    std::size_t end = start + 4;
    if (frame_.settings.content_checksum) {
      if (!have(
              in, end, 4, [&] { return where(frame_index(), frame_.offset); }, "content checksum"))
        return Step::more;
      frame_.content_checksum = read32(in, end);
      end += 4;
    }
    pos_ = end;
    return end_frame();
  }
  const std::uint32_t stored = word & ~uncompressed_bit;
  const std::size_t max = block_max_bytes(frame_.settings.block_size_id);
  if (stored == 0) fail(bat(), "raw block of 0 bytes (only the EndMark 0x00000000 may be empty)");
  if (stored > max)
    fail(bat(), "block of " + std::to_string(stored) + " bytes exceeds the frame's maximum of " + std::to_string(max));
  const std::size_t trailer = frame_.settings.block_checksums ? 4 : 0;
  if (!have(in, start + 4, std::size_t{stored} + trailer, bat, "block data")) return Step::more;
  block_ = BlockRef{};
  block_.frame = frame_index();
  block_.index = index;
  block_.offset = start + 4;
  block_.stored = stored;
  block_.raw = (word & uncompressed_bit) != 0;
  block_.max_decoded = max;
  if (trailer) block_.checksum = read32(in, start + 4 + stored);
  pos_ = start + 4 + stored + trailer;
  ++frame_.block_count;
  return Step::block;
}

// `lz4 -l`: 8 MiB independent compressed blocks, no end mark; the frame ends at the end of the
// input or where the next size word reads as a magic number (as the lz4 tool decides).
FrameScanner::Step FrameScanner::legacy_block(FrameBytes& in) {
  const std::size_t start = pos_, index = frame_.block_count;
  if (start == in.end()) return in.complete() ? end_frame() : Step::more;
  const auto bat = [&] { return block_where(frame_index(), index, start); };
  if (!have(in, start, 4, bat, "legacy block size")) return Step::more;
  const std::uint32_t word = read32(in, start);
  if (word == frame_magic || word == legacy_magic || is_skippable(word)) return end_frame();
  const std::size_t limit = compress_bound(legacy_block_bytes);
  if (word == 0 || word > limit)
    fail(bat(), "legacy block size " + std::to_string(word) + " is not 1.." + std::to_string(limit));
  if (!have(in, start + 4, word, bat, "legacy block data")) return Step::more;
  block_ = BlockRef{};
  block_.frame = frame_index();
  block_.index = index;
  block_.offset = start + 4;
  block_.stored = word;
  block_.max_decoded = legacy_block_bytes;
  pos_ = start + 4 + word;
  ++frame_.block_count;
  return Step::block;
}

// A skippable frame's data is passed over as it arrives: it need never be held whole.
FrameScanner::Step FrameScanner::skip(FrameBytes& in) {
  const auto at = [&] { return where(frame_index(), frame_.offset); };
  if (state_ == State::skip_size) {
    if (!have(in, pos_, 4, at, "skippable frame size")) return Step::more;
    skip_left_ = read32(in, pos_);
    pos_ += 4;
    skip_from_ = pos_;
    state_ = State::skipping;
  }
  const std::size_t here = in.end() - pos_;
  if (here < skip_left_) {
    if (!in.complete()) {
      pos_ += here;
      skip_left_ -= here;
      return Step::more;
    }
    const std::size_t size = skip_left_ + (pos_ - skip_from_);
    fail(at(), "truncated: skippable frame data needs " + std::to_string(size) + " bytes, " +
                   std::to_string(in.end() - skip_from_) + " left at input byte " + std::to_string(skip_from_));
  }
  pos_ += skip_left_;
  skip_left_ = 0;
  return end_frame();
}

FrameScanner::Step FrameScanner::end_frame() {
  frame_.bytes = pos_ - frame_.offset;
  state_ = State::between;
  return Step::frame_end;
}

}  // namespace opkit::ops::lz4
