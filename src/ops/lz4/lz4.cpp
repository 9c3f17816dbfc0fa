// lz4_compress / lz4_decompress, and Lz4FrameWriter: frames around the block codecs. Compression
// cuts the data into chunks (bounded device memory), each into equal blocks, and hashes the content
// as it goes; decompression is Lz4StreamDecoder (stream_decoder.cpp) given the whole input at once.
#include "opkit/ops/lz4.hpp"

#include <xxhash.h>

#include <algorithm>
#include <future>

#include "lz4/block_codec.hpp"
#include "lz4/frame_format.hpp"
#include "opkit/error.hpp"

namespace opkit::ops {
namespace {

constexpr std::size_t chunk_bytes = std::size_t{256} << 20;  // per codec call: a multiple of 4 MiB

struct HashDeleter {
  void operator()(XXH32_state_t* s) const { XXH32_freeState(s); }
};

}  // namespace

struct Lz4FrameWriter::State {
  Lz4CompressOptions options;
  lz4::FrameSettings settings;
  std::unique_ptr<lz4::BlockCodec> codec;
  std::unique_ptr<XXH32_state_t, HashDeleter> hash{XXH32_createState()};
  bool started = false;
  std::uint64_t written = 0;

  void start(std::vector<std::uint8_t>& out) {
    if (started) return;
    lz4::append_frame_header(out, settings);
    started = true;
  }
};

Lz4FrameWriter::Lz4FrameWriter(const Lz4CompressOptions& options, std::optional<std::uint64_t> content_size)
    : s_(std::make_unique<State>()) {
  if (options.content_size && !content_size)
    throw Error(Errc::invalid_argument, "lz4_compress", "options.content_size needs the content size up front");
  s_->options = options;
  s_->settings.block_size_id = static_cast<unsigned>(options.block_size);
  s_->settings.block_checksums = options.block_checksums;
  s_->settings.content_checksum = options.content_checksum;
  if (options.content_size) s_->settings.content_size = content_size;
  s_->codec = options.device ? lz4::kernel_block_codec(*options.device) : lz4::host_block_codec();
  XXH32_reset(s_->hash.get(), 0);
}

Lz4FrameWriter::~Lz4FrameWriter() = default;

std::size_t Lz4FrameWriter::block_bytes() const {
  return lz4::block_max_bytes(s_->settings.block_size_id);
}

void Lz4FrameWriter::write(std::span<const std::uint8_t> data, std::vector<std::uint8_t>& out) {
  State& s = *s_;
  s.start(out);
  // The content checksum is one sequential pass: on the host, beside the device's work.
  std::future<void> hashed;
  if (s.options.content_checksum)
    hashed = std::async(s.options.device ? std::launch::async : std::launch::deferred,
                        [&] { XXH32_update(s.hash.get(), data.data(), data.size()); });
  for (std::size_t at = 0; at < data.size(); at += chunk_bytes)
    s.codec->encode(data.subspan(at, std::min(chunk_bytes, data.size() - at)), block_bytes(), s.options.block_checksums,
                    out);
  if (hashed.valid()) hashed.get();
  s.written += data.size();
}

void Lz4FrameWriter::finish(std::vector<std::uint8_t>& out) {
  State& s = *s_;
  s.start(out);
  if (s.settings.content_size && *s.settings.content_size != s.written)
    throw Error(Errc::invalid_argument, "lz4_compress",
                "the header declares " + std::to_string(*s.settings.content_size) + " bytes of content, " +
                    std::to_string(s.written) + " were written");
  lz4::append_le32(out, 0);  // EndMark
  if (s.options.content_checksum) lz4::append_le32(out, XXH32_digest(s.hash.get()));
}

std::vector<std::uint8_t> lz4_compress(std::span<const std::uint8_t> data, const Lz4CompressOptions& options) {
  Lz4FrameWriter writer(options, data.size());
  std::vector<std::uint8_t> frame;
  writer.write(data, frame);
  writer.finish(frame);
  return frame;
}

std::vector<std::uint8_t> lz4_decompress(std::span<const std::uint8_t> frames, const Lz4DecompressOptions& options) {
  std::vector<std::uint8_t> out;
  Lz4StreamDecoder decoder(
      options, [&out](std::span<const std::uint8_t> bytes) { out.insert(out.end(), bytes.begin(), bytes.end()); },
      chunk_bytes);
  decoder.decode(frames, true);
  return out;
}

std::size_t lz4_compress_bound(std::size_t bytes, const Lz4CompressOptions& options) {
  const std::size_t block_bytes = lz4::block_max_bytes(static_cast<unsigned>(options.block_size));
  const std::size_t blocks = (bytes + block_bytes - 1) / block_bytes;
  return lz4::max_header_bytes + bytes + blocks * (4 + (options.block_checksums ? 4 : 0)) + 4 + 4;
}

}  // namespace opkit::ops
