// Lz4StreamDecoder (include/opkit/ops/lz4.hpp): FrameScanner's elements as they arrive.
// Independent blocks gather into a batch (bounded room, one window) that a block codec decodes
// at once; linked blocks decode one after another on the host with liblz4 against the frame's
// last 64 KiB. Every size, limit and checksum a frame declares is checked as its bytes go out.
#include <lz4.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "lz4/block_codec.hpp"
#include "lz4/frame_format.hpp"
#include "lz4/frame_scanner.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"

namespace opkit::ops {
namespace {

using lz4::BlockRef;
using lz4::FrameScanner;

constexpr std::size_t history_bytes = 64 * 1024;  // linked blocks see this much output

[[noreturn]] void fail(const std::string& location, const std::string& problem) {
  throw Error(Errc::invalid_argument, "lz4 frame", location + ": " + problem);
}

struct HashDeleter {
  void operator()(XXH32_state_t* s) const { XXH32_freeState(s); }
};

}  // namespace

struct Lz4StreamDecoder::State {
  Lz4DecompressOptions options;
  Sink sink;
  std::size_t batch_bytes;
  std::unique_ptr<lz4::BlockCodec> codec;
  FrameScanner scanner;
  std::size_t base = 0;        // input offset of the next window's first byte
  std::uint64_t produced = 0;  // bytes handed to the sink
  // The frame being decoded.
  std::uint64_t frame_produced = 0;
  bool linked = false, hashing = false;
  std::unique_ptr<XXH32_state_t, HashDeleter> hash{XXH32_createState()};
  std::vector<std::uint8_t> linked_out;  // linked blocks: history, then the block being decoded
  // Independent blocks of this window waiting to be decoded.
  std::vector<BlockRef> pending;
  std::vector<std::size_t> slots{0};
  std::vector<std::uint8_t> scratch;

  State(const Lz4DecompressOptions& o, Sink s, std::size_t batch)
      : options(o),
        sink(std::move(s)),
        batch_bytes(batch),
        codec(o.device ? lz4::kernel_block_codec(*o.device) : lz4::host_block_codec()) {}

  void limit(const BlockRef& b, std::size_t bytes) const {
    if (bytes > options.max_output - produced)
      lz4::throw_block_error(b, "decompressed data exceeds the output limit of " + std::to_string(options.max_output) +
                                    " bytes (max_output)");
  }

  void emit(std::span<const std::uint8_t> bytes) {
    if (bytes.empty()) return;
    if (hashing) XXH32_update(hash.get(), bytes.data(), bytes.size());
    produced += bytes.size();
    frame_produced += bytes.size();
    sink(bytes);
  }

  void begin_frame() {
    const lz4::FrameRef& frame = scanner.frame();
    const std::optional<std::uint64_t> declared = frame.settings.content_size;
    if (declared && *declared > options.max_output - produced)
      fail(lz4::where(scanner.frame_index(), frame.offset),
           "content size " + std::to_string(*declared) + " exceeds the output limit of " +
               std::to_string(options.max_output) + " bytes (max_output)");
    frame_produced = 0;
    linked = frame.kind == lz4::FrameKind::lz4 && !frame.settings.independent;
    hashing = options.verify_checksums && frame.settings.content_checksum;
    if (hashing) XXH32_reset(hash.get(), 0);
    linked_out.clear();
  }

  void end_frame() {
    const lz4::FrameRef& frame = scanner.frame();
    const std::string at = lz4::where(scanner.frame_index(), frame.offset);
    if (frame.settings.content_size && *frame.settings.content_size != frame_produced)
      fail(at, lz4::content_size_problem(*frame.settings.content_size, frame_produced));
    if (hashing && frame.content_checksum) {
      const std::uint32_t digest = XXH32_digest(hash.get());
      if (digest != *frame.content_checksum) fail(at, lz4::content_checksum_problem(*frame.content_checksum, digest));
    }
  }

  void add_independent(std::span<const std::uint8_t> window, const BlockRef& b) {
    const std::size_t cap = lz4::decoded_cap(b);
    if (!pending.empty() && slots.back() + cap > batch_bytes) flush(window);
    pending.push_back(b);
    slots.push_back(slots.back() + cap);
  }

  // Decodes the pending blocks, then packs their bytes (slots move down, in order) for one emit.
  void flush(std::span<const std::uint8_t> window) {
    if (pending.empty()) return;
    scratch.resize(slots.back());
    const std::vector<std::size_t> sizes =
        codec->decode(window, base, pending, slots, scratch, options.verify_checksums);
    std::size_t packed = 0;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      limit(pending[i], packed + sizes[i]);
      std::memmove(scratch.data() + packed, scratch.data() + slots[i], sizes[i]);
      packed += sizes[i];
    }
    pending.clear();
    slots.resize(1);
    emit(std::span<const std::uint8_t>(scratch.data(), packed));
  }

  // A linked block may copy from the 64 KiB of this frame's output before it: linked_out holds
  // that history, and the block decodes right after it.
  void decode_linked(std::span<const std::uint8_t> window, const BlockRef& b) {
    const std::uint8_t* from = window.data() + (b.offset - base);
    if (options.verify_checksums && b.checksum) {
      const std::uint32_t digest = XXH32(from, b.stored, 0);
      if (digest != *b.checksum) lz4::throw_block_error(b, lz4::checksum_problem(*b.checksum, digest));
    }
    if (linked_out.size() > history_bytes)
      linked_out.erase(linked_out.begin(), linked_out.end() - static_cast<std::ptrdiff_t>(history_bytes));
    const std::size_t history = linked_out.size();
    std::size_t size = b.stored;
    if (b.raw) {
      limit(b, b.stored);
      linked_out.insert(linked_out.end(), from, from + b.stored);
    } else {
      const std::size_t cap = lz4::decoded_cap(b);
      const std::size_t room = std::min<std::uint64_t>(cap, options.max_output - produced);
      linked_out.resize(history + room);
      const int r = LZ4_decompress_safe_usingDict(
          reinterpret_cast<const char*>(from), reinterpret_cast<char*>(linked_out.data() + history),
          static_cast<int>(b.stored), static_cast<int>(room), reinterpret_cast<const char*>(linked_out.data()),
          static_cast<int>(history));
      if (r < 0) {
        if (room < cap) limit(b, cap);  // it may only have run out of the limit
        lz4::throw_block_error(b, "corrupt LZ4 block (liblz4 stops at block byte " + std::to_string(-r - 1) +
                                      "; or it decodes to more than " + std::to_string(cap) + " bytes)");
      }
      size = static_cast<std::size_t>(r);
      linked_out.resize(history + size);
    }
    emit(std::span<const std::uint8_t>(linked_out.data() + history, size));
  }
};

Lz4StreamDecoder::Lz4StreamDecoder(const Lz4DecompressOptions& options, Sink sink, std::size_t batch_bytes)
    : s_(std::make_unique<State>(options, std::move(sink), batch_bytes)) {}

Lz4StreamDecoder::~Lz4StreamDecoder() = default;

std::size_t Lz4StreamDecoder::decode(std::span<const std::uint8_t> window, bool last) {
  State& s = *s_;
  lz4::WindowBytes bytes(window, s.base, last);
  for (;;) {
    switch (s.scanner.next(bytes)) {
      case FrameScanner::Step::frame:
        s.begin_frame();
        break;
      case FrameScanner::Step::block:
        if (s.linked)
          s.decode_linked(window, s.scanner.block());
        else
          s.add_independent(window, s.scanner.block());
        break;
      case FrameScanner::Step::frame_end:
        s.flush(window);
        s.end_frame();
        break;
      case FrameScanner::Step::more:
      case FrameScanner::Step::done: {
        s.flush(window);  // no block waits past its window
        const std::size_t done = s.scanner.position() - s.base;
        s.base = s.scanner.position();
        return done;
      }
    }
  }
}

std::uint64_t Lz4StreamDecoder::consumed() const {
  return s_->base;
}

std::uint64_t Lz4StreamDecoder::produced() const {
  return s_->produced;
}

}  // namespace opkit::ops
