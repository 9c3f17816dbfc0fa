// The device-memory forms of lz4_compress / lz4_decompress (include/opkit/ops/lz4.hpp): the
// blocks of every item of a batch go through one launch per step (compress, hash, gather;
// scan, hash, decode, pack). The frames' block index is found on the device (device_scan.hpp) and
// checked on the host; frame headers, block layouts and content checksums are host work.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lz4/block_codec.hpp"
#include "lz4/content_checksum.hpp"
#include "lz4/device_lz4.hpp"
#include "lz4/device_scan.hpp"
#include "lz4/frame_format.hpp"
#include "lz4/kernels/lz4_status.h"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"

namespace opkit::ops {
namespace {

using lz4::BlockRef;
using lz4::FrameRef;
using lz4::from_base;
using lz4::lowest;
using Items = std::span<const BufferView<const std::uint8_t>>;

constexpr std::size_t pack_piece = std::size_t{1} << 20;  // bytes per packing entry (one thread block)

Device common_device(Items items, const std::optional<Device>& wanted, const char* op) {
  if (items.empty()) {
    if (!wanted) throw Error(Errc::invalid_argument, op, "an empty batch needs options.device");
    return *wanted;
  }
  const Device& first = items[0].device();
  for (std::size_t i = 1; i < items.size(); ++i)
    if (!(items[i].device() == first))
      throw Error(
          Errc::invalid_argument, op,
          "batch item " + std::to_string(i) + " lives on " + items[i].device().id() + ", item 0 on " + first.id());
  if (wanted && !(*wanted == first))
    throw Error(Errc::invalid_argument, op,
                "options.device is " + wanted->id() + " but the data lives on " + first.id());
  return first;
}

// Runs `body`; when the batch has several items, its error names the item.
template <class F>
void for_item(std::size_t i, std::size_t n, F&& body) {
  try {
    body();
  } catch (const Error& e) {
    if (n == 1) throw;
    throw Error(e.kind(), e.stage(), "batch item " + std::to_string(i) + ": " + e.message());
  }
}

// Host bytes that a scatter launch places: each piece goes to the device at dst.
struct Pieces {
  std::vector<std::uint8_t> bytes;
  std::vector<unsigned long long> src, dst;
  std::vector<std::uint32_t> len;

  void add(std::span<const std::uint8_t> piece, std::size_t at) {
    src.push_back(bytes.size());
    dst.push_back(at);
    len.push_back(static_cast<std::uint32_t>(piece.size()));
    bytes.insert(bytes.end(), piece.begin(), piece.end());
  }
};

// Moves of device bytes (slots to their packed place), cut into pieces of at most pack_piece.
struct Moves {
  std::vector<unsigned long long> src, dst;
  std::vector<std::uint32_t> len;
  bool identity = true;

  void add(std::size_t from, std::size_t to, std::size_t bytes) {
    identity = identity && from == to;
    for (std::size_t done = 0; done < bytes; done += pack_piece) {
      src.push_back(from + done);
      dst.push_back(to + done);
      len.push_back(static_cast<std::uint32_t>(std::min(pack_piece, bytes - done)));
    }
  }
};

// One item of a decompression batch.
struct DecodePlan {
  lz4::ParsedInput parsed;            // found on the device (device_scan.hpp)
  std::vector<std::uint8_t> decoded;  // linked frames: decoded on the host
  bool on_host = false;
  std::size_t first = 0;                 // its first entry in the block tables
  std::size_t slot_lo = 0, slot_hi = 0;  // its room in the slots
};

}  // namespace

Lz4Batch lz4_compress_batch(Items items, const Lz4CompressOptions& options) {
  const Device device = common_device(items, options.device, "lz4_compress");
  const lz4::DeviceLz4 engine(device);
  const unsigned id = static_cast<unsigned>(options.block_size);
  const std::size_t block_bytes = lz4::block_max_bytes(id);
  const std::uint8_t* base = lowest(items);
  std::vector<unsigned long long> in_at;
  std::vector<std::uint32_t> in_len;
  std::vector<std::size_t> first_block{0};
  for (const auto& item : items) {
    for (std::size_t at = 0; at < item.size(); at += block_bytes) {
      in_at.push_back(from_base(base, item.data()) + at);
      in_len.push_back(static_cast<std::uint32_t>(std::min(block_bytes, item.size() - at)));
    }
    first_block.push_back(in_at.size());
  }
  // The content checksums come down and are hashed on a thread of their own meanwhile.
  std::optional<lz4::ContentChecksums> content_checksums;
  if (options.content_checksum) content_checksums.emplace(items);
  const lz4::DeviceLz4::Compressed packed =
      engine.compress(engine.blocks(base, in_at, in_len), options.block_checksums);
  const std::vector<std::uint32_t> sums = content_checksums ? content_checksums->get() : std::vector<std::uint32_t>{};

  Pieces pieces;
  std::vector<unsigned long long> block_at(in_at.size());
  Lz4Batch batch{device.alloc<std::uint8_t>(0), {0}};
  std::size_t total = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    lz4::FrameSettings settings;
    settings.block_size_id = id;
    settings.block_checksums = options.block_checksums;
    settings.content_checksum = options.content_checksum;
    if (options.content_size) settings.content_size = items[i].size();
    std::vector<std::uint8_t> head;
    lz4::append_frame_header(head, settings);
    pieces.add(head, total);
    total += head.size();
    for (std::size_t b = first_block[i]; b < first_block[i + 1]; ++b) {
      block_at[b] = total;
      total += 4 + (packed.host_words[b] & ~lz4::uncompressed_bit) + (options.block_checksums ? 4 : 0);
    }
    std::vector<std::uint8_t> tail;
    lz4::append_le32(tail, 0);  // EndMark
    if (options.content_checksum) lz4::append_le32(tail, sums[i]);
    pieces.add(tail, total);
    total += tail.size();
    batch.offsets.push_back(total);
  }
  batch.bytes = device.alloc<std::uint8_t>(total);
  engine.gather(packed, block_at, batch.bytes.data());
  const DeviceBuffer<std::uint8_t> d_pieces = lz4::upload(device, std::span<const std::uint8_t>(pieces.bytes));
  engine.scatter(d_pieces.data(), pieces.src, pieces.len, batch.bytes.data(), pieces.dst);
  return batch;
}

DeviceBuffer<std::uint8_t> lz4_compress(BufferView<const std::uint8_t> data, const Lz4CompressOptions& options) {
  return std::move(lz4_compress_batch(std::span(&data, 1), options).bytes);
}

Lz4Batch lz4_decompress_batch(Items items, const Lz4DecompressOptions& options) {
  const Device device = common_device(items, options.device, "lz4_decompress");
  const lz4::DeviceLz4 engine(device);
  const std::uint8_t* base = lowest(items);
  const std::size_t n = items.size();
  std::vector<DecodePlan> plans(n);
  lz4::DeviceFrameScan scan(engine, items);
  std::vector<const BlockRef*> refs;
  std::vector<unsigned long long> in_at, out_at;
  std::vector<std::uint32_t> in_len, caps;
  std::size_t slots_total = 0;
  bool any_checksum = false;
  for (std::size_t i = 0; i < n; ++i) {
    for_item(i, n, [&] {
      DecodePlan& p = plans[i];
      p.parsed = scan.parse(i);
      std::uint64_t declared = 0;
      for (std::size_t f = 0; f < p.parsed.frames.size(); ++f) {
        const FrameRef& frame = p.parsed.frames[f];
        p.on_host = p.on_host || (frame.kind == lz4::FrameKind::lz4 && !frame.settings.independent);
        const std::uint64_t size = frame.settings.content_size.value_or(0);
        if (size > options.max_output - declared)  // never overflows: declared <= max_output
          throw Error(Errc::invalid_argument, "lz4 frame",
                      lz4::where(f, frame.offset) + ": content size " + std::to_string(size) +
                          " exceeds the output limit of " + std::to_string(options.max_output) + " bytes (max_output)");
        declared += size;
      }
      p.slot_lo = slots_total;
      p.first = refs.size();
      if (p.on_host) {  // linked blocks: down to the host, liblz4 in order, then up to the device
        Lz4DecompressOptions host = options;
        host.device.reset();
        p.decoded = lz4_decompress(lz4::download(items[i], items[i].size()), host);
        slots_total += p.decoded.size();
      } else {
        std::size_t room = 0, largest = 0;
        for (const BlockRef& b : p.parsed.blocks) {
          refs.push_back(&b);
          in_at.push_back(from_base(base, items[i].data()) + b.offset);
          in_len.push_back(b.stored | (b.raw ? lz4::uncompressed_bit : 0u));
          out_at.push_back(slots_total + room);
          caps.push_back(static_cast<std::uint32_t>(lz4::decoded_cap(b)));
          room += caps.back();
          largest = std::max(largest, b.max_decoded);
          any_checksum = any_checksum || b.checksum.has_value();
        }
        if (room > options.max_output && room - options.max_output > largest)
          throw Error(Errc::invalid_argument, "lz4 frame",
                      "the blocks may decode to " + std::to_string(room) + " bytes, more than the output limit of " +
                          std::to_string(options.max_output) + " bytes (max_output) and one block");
        slots_total += room;
      }
      p.slot_hi = slots_total;
    });
  }
  const std::size_t count = refs.size();
  // Which item entry e belongs to: the plans are in entry order.
  auto item_of = [&](std::size_t e) {
    std::size_t i = 0;
    while (i + 1 < n && plans[i + 1].first <= e) ++i;
    return i;
  };
  const lz4::DeviceLz4::BlockTable table = engine.table(in_at, in_len, out_at, caps);
  if (options.verify_checksums && any_checksum) {  // a block that fails its checksum is not decoded
    DeviceBuffer<std::uint32_t> d_hashes = device.alloc<std::uint32_t>(count);
    engine.hash(base, table, d_hashes.data());
    const std::vector<std::uint32_t> hashes = lz4::download(d_hashes.view(), count);
    for (std::size_t e = 0; e < count; ++e)
      if (refs[e]->checksum && hashes[e] != *refs[e]->checksum)
        for_item(item_of(e), n,
                 [&] { lz4::throw_block_error(*refs[e], lz4::checksum_problem(*refs[e]->checksum, hashes[e])); });
  }
  DeviceBuffer<std::uint8_t> slots = device.alloc<std::uint8_t>(slots_total);
  // Each block's status, then its decoded size: one buffer, so that both come down in one copy.
  DeviceBuffer<std::uint32_t> d_results = device.alloc<std::uint32_t>(2 * count);
  engine.decode(base, table, slots.data(), d_results.data() + count, d_results.data());
  const std::vector<std::uint32_t> results = lz4::download(d_results.view(), 2 * count);
  const std::span<const std::uint32_t> status(results.data(), count), sizes(results.data() + count, count);
  for (std::size_t e = 0; e < count; ++e)
    if (status[e] != LZ4K_OK)
      for_item(item_of(e), n, [&] { lz4::throw_block_error(*refs[e], lz4::status_problem(status[e], caps[e])); });

  // Sizes and limits per frame, then the packed layout.
  Lz4Batch batch{device.alloc<std::uint8_t>(0), {0}};
  Moves moves;
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const DecodePlan& p = plans[i];
    if (p.on_host) {
      slots.view().subview(p.slot_lo, p.decoded.size()).copy_from(std::span<const std::uint8_t>(p.decoded));
      moves.add(p.slot_lo, total, p.decoded.size());
      total += p.decoded.size();
      batch.offsets.push_back(total);
      continue;
    }
    const std::size_t start = total;
    for_item(i, n, [&] {
      for (std::size_t f = 0; f < p.parsed.frames.size(); ++f) {
        const FrameRef& frame = p.parsed.frames[f];
        std::size_t produced = 0;
        for (std::size_t b = frame.first_block; b < frame.first_block + frame.block_count; ++b) {
          const std::size_t e = p.first + b;
          if (sizes[e] > options.max_output - (total - start))
            lz4::throw_block_error(*refs[e], "decompressed data exceeds the output limit of " +
                                                 std::to_string(options.max_output) + " bytes (max_output)");
          moves.add(out_at[e], total, sizes[e]);
          total += sizes[e];
          produced += sizes[e];
        }
        if (frame.settings.content_size && *frame.settings.content_size != produced)
          throw Error(
              Errc::invalid_argument, "lz4 frame",
              lz4::where(f, frame.offset) + ": " + lz4::content_size_problem(*frame.settings.content_size, produced));
      }
    });
    batch.offsets.push_back(total);
  }
  // Every block decoded in place (only the last fell short of its slot) and little room left
  // over: the slots are the result, with no copy.
  if (moves.identity && slots_total - total <= std::max(total / 8, pack_piece)) {
    batch.bytes = std::move(slots);
    batch.bytes.truncate(total);
  } else {
    batch.bytes = device.alloc<std::uint8_t>(total);
    engine.scatter(slots.data(), moves.src, moves.len, batch.bytes.data(), moves.dst);
  }

  // Content checksums: one sequential pass per frame over its decoded bytes, on the host.
  if (!options.verify_checksums) return batch;
  for (std::size_t i = 0; i < n; ++i) {
    const DecodePlan& p = plans[i];
    if (p.on_host) continue;  // checked by the host decoder
    std::size_t at = batch.offsets[i];
    for_item(i, n, [&] {
      for (std::size_t f = 0; f < p.parsed.frames.size(); ++f) {
        const FrameRef& frame = p.parsed.frames[f];
        std::size_t produced = 0;
        for (std::size_t b = frame.first_block; b < frame.first_block + frame.block_count; ++b)
          produced += sizes[p.first + b];
        if (frame.content_checksum) {
          const std::uint32_t hash = lz4::device_content_checksum(batch.bytes.view().subview(at, produced));
          if (hash != *frame.content_checksum)
            throw Error(
                Errc::invalid_argument, "lz4 frame",
                lz4::where(f, frame.offset) + ": " + lz4::content_checksum_problem(*frame.content_checksum, hash));
        }
        at += produced;
      }
    });
  }
  return batch;
}

DeviceBuffer<std::uint8_t> lz4_decompress(BufferView<const std::uint8_t> frames, const Lz4DecompressOptions& options) {
  return std::move(lz4_decompress_batch(std::span(&frames, 1), options).bytes);
}

std::optional<std::uint64_t> lz4_content_size(std::span<const std::uint8_t> header) {
  return lz4::header_content_size(header);
}

}  // namespace opkit::ops
