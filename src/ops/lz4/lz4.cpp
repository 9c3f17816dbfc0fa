// lz4_compress / lz4_decompress: frames around the block codecs. Compression cuts the data into
// chunks (bounded device memory), each into equal blocks; decompression walks the parsed frames,
// decodes independent blocks in batches into slots sized by what each block can decode to, and
// checks every size, limit and checksum the frame declares.
#include "opkit/ops/lz4.hpp"

#include <lz4.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <future>

#include "lz4/block_codec.hpp"
#include "lz4/frame_format.hpp"
#include "opkit/error.hpp"

namespace opkit::ops {
namespace {

using lz4::BlockRef;
using lz4::FrameRef;

constexpr std::size_t chunk_bytes = std::size_t{256} << 20;  // per codec call: a multiple of 4 MiB
constexpr std::size_t history_bytes = 64 * 1024;             // linked blocks see this much output

std::unique_ptr<lz4::BlockCodec> codec_for(const std::optional<Device>& device) {
  return device ? lz4::kernel_block_codec(*device) : lz4::host_block_codec();
}

[[noreturn]] void fail(const std::string& location, const std::string& problem) {
  throw Error(Errc::invalid_argument, "lz4 frame", location + ": " + problem);
}

class FrameDecoder {
 public:
  FrameDecoder(std::span<const std::uint8_t> input, const Lz4DecompressOptions& options)
      : in_(input), options_(options), codec_(codec_for(options.device)) {}

  std::vector<std::uint8_t> run() {
    const lz4::ParsedInput parsed = lz4::parse_frames(in_);
    for (std::size_t f = 0; f < parsed.frames.size(); ++f) {
      const FrameRef& frame = parsed.frames[f];
      if (frame.kind == lz4::FrameKind::skippable) continue;
      const std::size_t start = out_.size();
      const auto blocks = std::span<const BlockRef>(parsed.blocks).subspan(frame.first_block, frame.block_count);
      if (frame.settings.content_size) {
        if (*frame.settings.content_size > options_.max_output - out_.size())
          fail(lz4::where(f, frame.offset), "content size " + std::to_string(*frame.settings.content_size) +
                                                " exceeds the output limit of " + std::to_string(options_.max_output) +
                                                " bytes (max_output)");
        out_.reserve(out_.size() + *frame.settings.content_size);
      }
      if (frame.kind == lz4::FrameKind::lz4 && !frame.settings.independent)
        decode_linked(blocks, start);
      else
        decode_independent(blocks);
      check_frame(frame, f, start);
    }
    return std::move(out_);
  }

 private:
  void grow(const BlockRef& b, std::size_t bytes) {
    if (bytes > options_.max_output - out_.size())
      lz4::throw_block_error(b, "decompressed data exceeds the output limit of " + std::to_string(options_.max_output) +
                                    " bytes (max_output)");
  }

  void decode_independent(std::span<const BlockRef> blocks) {
    while (!blocks.empty()) {
      std::vector<std::size_t> slots{0};
      std::size_t n = 0;
      while (n < blocks.size() && (n == 0 || slots.back() + lz4::decoded_cap(blocks[n]) <= chunk_bytes))
        slots.push_back(slots.back() + lz4::decoded_cap(blocks[n++]));
      std::vector<std::uint8_t> scratch(slots.back());
      const auto batch = blocks.first(n);
      const std::vector<std::size_t> sizes = codec_->decode(in_, batch, slots, scratch, options_.verify_checksums);
      for (std::size_t i = 0; i < n; ++i) {
        grow(batch[i], sizes[i]);
        out_.insert(out_.end(), scratch.begin() + static_cast<std::ptrdiff_t>(slots[i]),
                    scratch.begin() + static_cast<std::ptrdiff_t>(slots[i] + sizes[i]));
      }
      blocks = blocks.subspan(n);
    }
  }

  // Linked blocks: each may copy from the 64 KiB of this frame's output before it, so they decode
  // one after another, on the host (liblz4), straight into the output.
  void decode_linked(std::span<const BlockRef> blocks, std::size_t frame_start) {
    for (const BlockRef& b : blocks) {
      const std::uint8_t* from = in_.data() + b.offset;
      if (options_.verify_checksums && b.checksum) {
        const std::uint32_t hash = XXH32(from, b.stored, 0);
        if (hash != *b.checksum) lz4::throw_block_error(b, lz4::checksum_problem(*b.checksum, hash));
      }
      const std::size_t pos = out_.size();
      const std::size_t cap = lz4::decoded_cap(b);
      const std::size_t room = std::min(cap, options_.max_output - pos);
      if (b.raw) {
        grow(b, b.stored);
        out_.insert(out_.end(), from, from + b.stored);
        continue;
      }
      out_.resize(pos + room);
      const std::size_t history = std::min(history_bytes, pos - frame_start);
      const int r = LZ4_decompress_safe_usingDict(
          reinterpret_cast<const char*>(from), reinterpret_cast<char*>(out_.data() + pos), static_cast<int>(b.stored),
          static_cast<int>(room), reinterpret_cast<const char*>(out_.data() + pos - history),
          static_cast<int>(history));
      if (r < 0) {
        out_.resize(pos);
        if (room < cap) grow(b, cap);  // it may only have run out of the limit
        lz4::throw_block_error(b, "corrupt LZ4 block (liblz4 stops at block byte " + std::to_string(-r - 1) +
                                      "; or it decodes to more than " + std::to_string(cap) + " bytes)");
      }
      out_.resize(pos + static_cast<std::size_t>(r));
    }
  }

  void check_frame(const FrameRef& frame, std::size_t index, std::size_t start) {
    const std::size_t produced = out_.size() - start;
    const std::string at = lz4::where(index, frame.offset);
    if (frame.settings.content_size && *frame.settings.content_size != produced)
      fail(at, lz4::content_size_problem(*frame.settings.content_size, produced));
    if (options_.verify_checksums && frame.content_checksum) {
      const std::uint32_t hash = XXH32(out_.data() + start, produced, 0);
      if (hash != *frame.content_checksum) fail(at, lz4::content_checksum_problem(*frame.content_checksum, hash));
    }
  }

  std::span<const std::uint8_t> in_;
  const Lz4DecompressOptions& options_;
  std::unique_ptr<lz4::BlockCodec> codec_;
  std::vector<std::uint8_t> out_;
};

}  // namespace

std::vector<std::uint8_t> lz4_compress(std::span<const std::uint8_t> data, const Lz4CompressOptions& options) {
  lz4::FrameSettings settings;
  settings.block_size_id = static_cast<unsigned>(options.block_size);
  settings.block_checksums = options.block_checksums;
  settings.content_checksum = options.content_checksum;
  if (options.content_size) settings.content_size = data.size();
  std::vector<std::uint8_t> frame;
  lz4::append_frame_header(frame, settings);
  // The content checksum is one sequential pass: on the host, beside the device's work.
  std::future<std::uint32_t> content;
  if (options.content_checksum)
    content = std::async(options.device ? std::launch::async : std::launch::deferred,
                         [data] { return static_cast<std::uint32_t>(XXH32(data.data(), data.size(), 0)); });
  const std::unique_ptr<lz4::BlockCodec> codec = codec_for(options.device);
  const std::size_t block_bytes = lz4::block_max_bytes(settings.block_size_id);
  for (std::size_t at = 0; at < data.size(); at += chunk_bytes)
    codec->encode(data.subspan(at, std::min(chunk_bytes, data.size() - at)), block_bytes, options.block_checksums,
                  frame);
  lz4::append_le32(frame, 0);  // EndMark
  if (options.content_checksum) lz4::append_le32(frame, content.get());
  return frame;
}

std::vector<std::uint8_t> lz4_decompress(std::span<const std::uint8_t> frames, const Lz4DecompressOptions& options) {
  return FrameDecoder(frames, options).run();
}

std::size_t lz4_compress_bound(std::size_t bytes, const Lz4CompressOptions& options) {
  const std::size_t block_bytes = lz4::block_max_bytes(static_cast<unsigned>(options.block_size));
  const std::size_t blocks = (bytes + block_bytes - 1) / block_bytes;
  return lz4::max_header_bytes + bytes + blocks * (4 + (options.block_checksums ? 4 : 0)) + 4 + 4;
}

}  // namespace opkit::ops
