// The writing half of the frame codec: descriptors and size words, as lz4_Frame_format.md lays
// them out (little endian; header checksum = second byte of xxHash32 of FLG .. last field).
#include <xxhash.h>

#include "lz4/frame_format.hpp"
#include "opkit/error.hpp"

namespace opkit::ops::lz4 {

void append_le32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
}

void append_frame_header(std::vector<std::uint8_t>& out, const FrameSettings& settings) {
  if (settings.block_size_id < 4 || settings.block_size_id > 7)
    throw Error(Errc::invalid_argument, "lz4 frame",
                "block size id " + std::to_string(settings.block_size_id) + " is not 4..7");
  append_le32(out, frame_magic);
  const std::size_t descriptor = out.size();
  std::uint8_t flg = flg_version_01;
  if (settings.independent) flg |= flg_block_independent;
  if (settings.block_checksums) flg |= flg_block_checksum;
  if (settings.content_size) flg |= flg_content_size;
  if (settings.content_checksum) flg |= flg_content_checksum;
  out.push_back(flg);
  out.push_back(static_cast<std::uint8_t>(settings.block_size_id << 4));
  if (settings.content_size) {
    append_le32(out, static_cast<std::uint32_t>(*settings.content_size));
    append_le32(out, static_cast<std::uint32_t>(*settings.content_size >> 32));
  }
  const std::uint32_t hash = XXH32(out.data() + descriptor, out.size() - descriptor, 0);
  out.push_back(static_cast<std::uint8_t>(hash >> 8));
}

}  // namespace opkit::ops::lz4
