// LZ4 compression in the standard LZ4 Frame format (the `.lz4` files of the `lz4` tool): one
// buffer in, one frame out, and back. Three engines run it, chosen by `device`:
//   unset          the host CPU through liblz4's block API, blocks in parallel on all cores;
//   a CUDA device  opkit's own kernels (src/ops/lz4/kernels) on that GPU;
//   the CPU device the same kernel source on the CPU backend (how CI runs the GPU code).
// The frame is written and parsed by opkit's frame codec on the host either way; blocks are
// compressed independently, so any `lz4 -d` reads the output.
//
// Decoding accepts every valid input of concatenated frames: LZ4 frames of any block size,
// with or without block/content checksums and content size, independent or linked blocks
// (linked blocks decode in order on the host CPU with liblz4, whatever the device), skippable
// frames (skipped) and legacy frames (`lz4 -l`). Frames with a dictionary id are refused: there
// is no way to pass a dictionary. Hostile input gets an opkit::Error (invalid_argument) naming
// the frame, block and input byte; nothing is read or written out of bounds, and the output
// never grows past `max_output`.
//
// Device memory in and out (the overloads on BufferView): the data's device runs opkit's kernels
// and the result stays there. One buffer gives one frame; a batch of buffers gives a batch of
// frames in one launch per step (the nvCOMP batched case). Decompression finds the block index
// on the device (a kernel walks the block headers; only the bytes the frame parser checks, about
// 32 per block, come down); the host still computes content checksums (the data comes down in
// chunks, hashed as they land, beside the compress kernels: turn content_checksum /
// verify_checksums off where that costs too much) and decodes linked-block frames with liblz4
// (the frame comes down for those).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/kernel_set.hpp"

namespace opkit::ops {

// The frame's block maximum size (the BD byte's id: 4 .. 7, as `lz4 -B4 .. -B7`).
enum class Lz4BlockSize : std::uint8_t { kib64 = 4, kib256 = 5, mib1 = 6, mib4 = 7 };

struct Lz4CompressOptions {
  std::optional<Device> device = std::nullopt;    // unset: host CPU (liblz4)
  Lz4BlockSize block_size = Lz4BlockSize::kib64;  // 64 KiB blocks: parallelism for the GPU
  bool block_checksums = false;                   // `lz4 -BX`
  bool content_checksum = true;                   // off: `lz4 --no-frame-crc`
  bool content_size = false;                      // `lz4 --content-size`
};

// The default decompressed-size limit: 1 GiB. (A valid block never decodes to more than 255
// times its stored size, and the decoder never reserves more than that per block, so a small
// malicious input cannot make it allocate much more than its own size times 255 either.)
inline constexpr std::size_t lz4_default_max_output = std::size_t{1} << 30;

struct Lz4DecompressOptions {
  std::optional<Device> device = std::nullopt;      // unset: host CPU (liblz4)
  std::size_t max_output = lz4_default_max_output;  // decoding more is an error
  bool verify_checksums = true;                     // header checksums are always verified
};

std::vector<std::uint8_t> lz4_compress(std::span<const std::uint8_t> data, const Lz4CompressOptions& options = {});
std::vector<std::uint8_t> lz4_decompress(std::span<const std::uint8_t> frames,
                                         const Lz4DecompressOptions& options = {});

// Streaming: a frame written, and frames read, a piece at a time, in memory bounded by the pieces
// (and one batch of blocks) rather than by the data; `opkit lz4` works this way. lz4_compress and
// lz4_decompress above are these with the whole buffer as one piece.
//
// Lz4FrameWriter: one frame. write() appends the header (first call) and the blocks of `data` to
// `out`; every piece but the last should be a multiple of block_bytes() (a shorter piece ends a
// block early: still a valid frame, a slightly worse ratio). With options.content_size the header
// declares `content_size`, which must then be given and is checked against the bytes written.
class Lz4FrameWriter {
 public:
  explicit Lz4FrameWriter(const Lz4CompressOptions& options, std::optional<std::uint64_t> content_size = std::nullopt);
  ~Lz4FrameWriter();
  Lz4FrameWriter(const Lz4FrameWriter&) = delete;
  Lz4FrameWriter& operator=(const Lz4FrameWriter&) = delete;
  void write(std::span<const std::uint8_t> data, std::vector<std::uint8_t>& out);
  // The end mark and content checksum; throws Error(invalid_argument) if the data written is not
  // the declared content size.
  void finish(std::vector<std::uint8_t>& out);
  std::size_t block_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The batch of independent blocks Lz4StreamDecoder decodes at once: at most this much room for
// their decoded bytes (see lz4::decoded_cap), and never less than one block.
inline constexpr std::size_t lz4_stream_batch_bytes = std::size_t{64} << 20;

// Lz4StreamDecoder: concatenated frames, fed in windows. decode(window, last) scans the input
// bytes from consumed() on, decodes every block wholly inside the window and hands the decoded
// bytes, in order, to the sink; it returns how many leading bytes of the window it is done with.
// The caller drops those, appends more input, and calls again; with last, the window is the rest
// of the input, and the call decodes it all or throws. Memory: the caller's window, plus room for
// one batch (batch_bytes, or one block's decoded_cap if larger: at most 8 MiB) and 64 KiB of
// history for linked blocks, whatever sizes the frames declare. A window always holds a whole
// block once it reaches 4 MiB + 8 bytes (8 MiB + 4 in a legacy frame). Errors as
// lz4_decompress's; after one the decoder is spent.
class Lz4StreamDecoder {
 public:
  using Sink = std::function<void(std::span<const std::uint8_t>)>;
  Lz4StreamDecoder(const Lz4DecompressOptions& options, Sink sink, std::size_t batch_bytes = lz4_stream_batch_bytes);
  ~Lz4StreamDecoder();
  Lz4StreamDecoder(const Lz4StreamDecoder&) = delete;
  Lz4StreamDecoder& operator=(const Lz4StreamDecoder&) = delete;
  std::size_t decode(std::span<const std::uint8_t> window, bool last);
  std::uint64_t consumed() const;  // input bytes done with
  std::uint64_t produced() const;  // decoded bytes handed to the sink

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Results of the batch forms: item i is bytes[offsets[i], offsets[i + 1]).
struct Lz4Batch {
  DeviceBuffer<std::uint8_t> bytes;
  std::vector<std::size_t> offsets;  // size() + 1 entries, offsets[0] = 0
  std::size_t size() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
  BufferView<const std::uint8_t> item(std::size_t i) const {
    return bytes.view().subview(offsets.at(i), offsets.at(i + 1) - offsets.at(i));
  }
};

// Device buffers: options.device must be unset or the data's device. All items of a batch live
// on one device. Errors of a batch item name it ("batch item 3: frame 0, block 2 ...").
DeviceBuffer<std::uint8_t> lz4_compress(BufferView<const std::uint8_t> data, const Lz4CompressOptions& options = {});
Lz4Batch lz4_compress_batch(std::span<const BufferView<const std::uint8_t>> items,
                            const Lz4CompressOptions& options = {});
// max_output applies to each item. Independent blocks decode into room of what each block can
// decode to (lz4::decoded_cap) and are packed afterwards; an item whose room exceeds max_output
// by more than one block maximum is refused before anything is allocated.
DeviceBuffer<std::uint8_t> lz4_decompress(BufferView<const std::uint8_t> frames,
                                          const Lz4DecompressOptions& options = {});
Lz4Batch lz4_decompress_batch(std::span<const BufferView<const std::uint8_t>> frames,
                              const Lz4DecompressOptions& options = {});

// The content size field of the LZ4 frame that `header` starts with (its first 19 bytes are
// enough), or nullopt when the frame has none (also for legacy and skippable frames). Throws
// Error(invalid_argument) when the header is malformed or truncated.
std::optional<std::uint64_t> lz4_content_size(std::span<const std::uint8_t> header);

// Where opkit's LZ4 kernels run (every backend that compiles CUDA C++).
const KernelSupport& lz4_support();

// The largest frame lz4_compress can write for `bytes` of data at this block size and options.
std::size_t lz4_compress_bound(std::size_t bytes, const Lz4CompressOptions& options = {});

}  // namespace opkit::ops
