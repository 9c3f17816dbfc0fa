// The LZ4 Frame format (lz4's doc/lz4_Frame_format.md) as data: the constants, a parsed frame
// descriptor, and the block table that the parser produces and every block codec consumes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace opkit::ops::lz4 {

inline constexpr std::uint32_t frame_magic = 0x184D2204;
inline constexpr std::uint32_t legacy_magic = 0x184C2102;
inline constexpr std::uint32_t skippable_magic_min = 0x184D2A50;  // 0x184D2A50 .. 0x184D2A5F
inline constexpr std::uint32_t skippable_magic_mask = 0xFFFFFFF0;
inline constexpr std::uint32_t uncompressed_bit = 0x80000000u;           // block size word: stored raw
inline constexpr std::size_t legacy_block_bytes = std::size_t{8} << 20;  // `lz4 -l` blocks decode to 8 MiB
inline constexpr std::size_t max_header_bytes = 4 + 2 + 8 + 4 + 1;       // magic FLG BD size dictID HC

// FLG bits.
inline constexpr std::uint8_t flg_version_mask = 0xC0, flg_version_01 = 0x40;
inline constexpr std::uint8_t flg_block_independent = 0x20, flg_block_checksum = 0x10;
inline constexpr std::uint8_t flg_content_size = 0x08, flg_content_checksum = 0x04;
inline constexpr std::uint8_t flg_reserved = 0x02, flg_dict_id = 0x01;

// Block maximum size ids of the BD byte (4: 64 KiB ... 7: 4 MiB).
inline constexpr std::size_t block_max_bytes(unsigned id) {
  return std::size_t{1} << (8 + 2 * id);
}

// The worst-case size of an LZ4 block compressing `n` bytes (LZ4_COMPRESSBOUND).
inline constexpr std::size_t compress_bound(std::size_t n) {
  return n + n / 255 + 16;
}

// What an encoder writes: the frame descriptor's choices.
struct FrameSettings {
  unsigned block_size_id = 4;  // 4..7
  bool independent = true;
  bool block_checksums = false;
  bool content_checksum = true;
  std::optional<std::uint64_t> content_size;
};

enum class FrameKind : std::uint8_t { lz4, legacy, skippable };

// One block of a frame as it lies in the input.
struct BlockRef {
  std::size_t frame = 0;                  // index among the frames of the input (skippable ones count)
  std::size_t index = 0;                  // index within its frame
  std::size_t offset = 0;                 // byte offset of the block's data in the input (after its size word)
  std::uint32_t stored = 0;               // bytes of data
  bool raw = false;                       // stored uncompressed
  std::size_t max_decoded = 0;            // the frame's block maximum size
  std::optional<std::uint32_t> checksum;  // expected xxHash32 of the stored bytes
};

// What a block can decode to: its stored size if raw; else at most 255 bytes per stored byte
// (a length byte adds at most 255), and never more than the frame's block maximum.
inline std::size_t decoded_cap(const BlockRef& b) {
  const std::size_t bound = std::size_t{255} * b.stored;
  return b.raw ? b.stored : (bound < b.max_decoded ? bound : b.max_decoded);
}

struct FrameRef {
  FrameKind kind = FrameKind::lz4;
  std::size_t offset = 0;                        // byte offset of the magic number
  std::size_t bytes = 0;                         // the whole frame, magic to its last byte
  FrameSettings settings;                        // lz4 frames only
  std::size_t first_block = 0, block_count = 0;  // into ParsedInput::blocks
  std::optional<std::uint32_t> content_checksum;
};

// Everything the parser learned: frames in input order, blocks in input order. Structure only:
// the header checksum is verified here; block contents, block checksums and sizes after
// decoding are checked by whoever decodes.
struct ParsedInput {
  std::vector<FrameRef> frames;
  std::vector<BlockRef> blocks;
};

// Parses a whole input of concatenated frames. Throws opkit::Error (invalid_argument) naming the
// frame, block and byte offset at the first structural problem: truncation, unknown magic,
// unsupported version, reserved bits, a dictionary id (no external dictionaries), bad header
// checksum, a block larger than the frame's maximum, trailing bytes.
ParsedInput parse_frames(std::span<const std::uint8_t> input);
// The content size field of the LZ4 frame starting `header` (nullopt: none, or another kind of
// frame), with the descriptor checked as parse_frames checks it.
std::optional<std::uint64_t> header_content_size(std::span<const std::uint8_t> header);

// Writers: the descriptor (magic .. header checksum), a block's size word, the end mark.
void append_frame_header(std::vector<std::uint8_t>& out, const FrameSettings& settings);
void append_le32(std::vector<std::uint8_t>& out, std::uint32_t value);
std::uint32_t read_le32(const std::uint8_t* p);

// "frame 2, block 7 (input byte 1234)": the location every frame error names.
std::string where(std::size_t frame, std::size_t offset);
std::string where(const BlockRef& block);

// xxHash32 (libxxhash), seed 0, as the frame format uses it.
std::uint32_t xxh32(std::span<const std::uint8_t> data);

}  // namespace opkit::ops::lz4
