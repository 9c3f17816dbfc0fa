// DeviceLz4: the embedded LZ4 kernels, compiled once per device by the operator's kernel set, and
// the launches of compression (compress, hash, lay out, gather) and decompression.
#include "lz4/device_lz4.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "lz4/block_codec.hpp"
#include "opkit/error.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/module.hpp"
#include "opkit_embedded.hpp"

namespace opkit::ops::lz4 {
namespace {

constexpr unsigned decode_threads = 32;        // LZ4K_DECODE_THREADS
constexpr unsigned max_compress_threads = 32;  // LZ4K_COMPRESS_THREADS
constexpr unsigned copy_threads = 128;
constexpr unsigned hash_threads = 128;
constexpr unsigned scan_threads = 64;
constexpr std::size_t small_block_limit = 65536 + 11;  // LZ4K_64K_LIMIT

std::string embedded(const std::string& name) {
  std::string_view text = opkit::detail::embedded_source(name);
  if (text.empty()) throw Error(Errc::not_found, "lz4", "kernel source " + name + " is not embedded");
  return std::string(text);
}

std::uint32_t grid_of(std::size_t count, unsigned per_block) {
  return static_cast<std::uint32_t>((count + per_block - 1) / per_block);
}

}  // namespace

Program kernel_program(const std::string& file) {
  return Program(embedded("lz4/" + file))
      .name(file)
      .header("lz4_status.h", embedded("lz4/lz4_status.h"))
      .header("lz4_scan.h", embedded("lz4/lz4_scan.h"))
      .header("lz4_copy.cuh", embedded("lz4/lz4_copy.cuh"))
      .header("xxh32.cuh", embedded("lz4/xxh32.cuh"));
}

struct DeviceKernels {
  Kernel compress, compress_small, compress_few_small, decompress, xxh32, gather, scatter, frame_scan;
  Kernel scan_head, scan_tiles, scan_index, scan_link, scan_round, scan_emit, scan_tail;
};

namespace {

// A kernel file and, for the compressor, its table and LZ4 blocks a thread block (lz4_compress.cu's
// LZ4K_SMALL_TABLE_ENTRIES, LZ4K_SMALL_BLOCKS_ONLY, LZ4K_BLOCKS_PER_CTA): the kernel set compiles
// each once per device.
struct Lz4Params {
  std::string file;
  unsigned small_table_entries = 8192;
  bool small_blocks_only = false;
  unsigned blocks_per_cta = 1;
  unsigned small_hash_bytes = 4;
  auto operator<=>(const Lz4Params&) const = default;
};

Program params_program(const Lz4Params& p) {
  Program program = kernel_program(p.file);
  if (p.file == "lz4_compress.cu") {
    program.define("LZ4K_SMALL_TABLE_ENTRIES", p.small_table_entries);
    if (p.small_blocks_only) program.define("LZ4K_SMALL_BLOCKS_ONLY");
    program.define("LZ4K_BLOCKS_PER_CTA", p.blocks_per_cta);
    program.define("LZ4K_SMALL_HASH_BYTES", p.small_hash_bytes);
  }
  return program;
}

const KernelSet<Lz4Params>& kernel_set() {
  // Never destroyed: its kernels keep modules loaded, which must not be unloaded during exit.
  static const auto* set = [] {
    auto* s = new KernelSet<Lz4Params>("lz4");
    s->add_language("cuda", {[](const Lz4Params& p) { return params_program(p); }});
    return s;
  }();
  return *set;
}

// blocks_per_cta: the small-table kernel's (the others take 1: their 16 KiB tables fill few SMs'
// worth of blocks at a time anyway, and four would pass the 48 KiB of static shared memory).
DeviceKernels kernels_for(const Device& device, unsigned small_table_entries, unsigned blocks_per_cta,
                          unsigned small_hash_bytes) {
  const KernelSet<Lz4Params>& set = kernel_set();
  return {set.kernel(device, {"lz4_compress.cu", 8192, false}, "lz4_compress"),
          set.kernel(device, {"lz4_compress.cu", small_table_entries, true, blocks_per_cta, small_hash_bytes},
                     "lz4_compress"),
          set.kernel(device, {"lz4_compress.cu", 8192, true}, "lz4_compress"),
          set.kernel(device, {"lz4_decompress.cu"}, "lz4_decompress"),
          set.kernel(device, {"lz4_xxh32.cu"}, "lz4_xxh32"),
          set.kernel(device, {"lz4_gather.cu"}, "lz4_gather"),
          set.kernel(device, {"lz4_scatter.cu"}, "lz4_scatter"),
          set.kernel(device, {"lz4_frame_scan.cu"}, "lz4_frame_scan"),
          set.kernel(device, {"lz4_frame_scan.cu"}, "lz4_scan_head"),
          set.kernel(device, {"lz4_frame_scan.cu"}, "lz4_scan_tiles"),
          set.kernel(device, {"lz4_frame_scan.cu"}, "lz4_scan_index"),
          set.kernel(device, {"lz4_frame_scan.cu"}, "lz4_scan_link"),
          set.kernel(device, {"lz4_frame_scan.cu"}, "lz4_scan_round"),
          set.kernel(device, {"lz4_frame_scan.cu"}, "lz4_scan_emit"),
          set.kernel(device, {"lz4_frame_scan.cu"}, "lz4_scan_tail")};
}

// Whether the compressor's LZ4 blocks are whole warps (a GPU at 32 threads a block), which
// several blocks a thread block need.
bool whole_warps(const Device& device, unsigned compress_threads) {
  return device.backend() != "cpu" && compress_threads == max_compress_threads;
}

void check_table_entries(unsigned entries) {
  if (entries < 1024 || entries > 8192 || entries % 8 != 0)
    throw Error(Errc::invalid_argument, "lz4", "small_table_entries must be a multiple of 8 from 1024 to 8192");
}

}  // namespace

DeviceLz4::DeviceLz4(Device device, unsigned small_table_entries, unsigned compress_threads, unsigned blocks_per_cta,
                     unsigned small_hash_bytes)
    : device_(std::move(device)),
      compress_threads_(compress_threads != 0        ? compress_threads
                        : device_.backend() == "cpu" ? 1
                                                     : max_compress_threads),
      // More than one only where a block is a whole warp on a GPU; the CPU backend's
      // shared-memory form takes one.
      blocks_per_cta_(blocks_per_cta != 0                       ? blocks_per_cta
                      : whole_warps(device_, compress_threads_) ? default_blocks_per_cta
                                                                : 1) {
  if (compress_threads_ > max_compress_threads)
    throw Error(Errc::invalid_argument, "lz4", "compress_threads must be 1..32");
  if ((blocks_per_cta_ != 1 && blocks_per_cta_ != 2 && blocks_per_cta_ != 4) ||
      (blocks_per_cta_ > 1 && !whole_warps(device_, compress_threads_)))
    throw Error(Errc::invalid_argument, "lz4", "blocks_per_cta must be 1, or 2 or 4 with 32 compress threads on a GPU");
  if (small_hash_bytes != 4 && small_hash_bytes != 5)
    throw Error(Errc::invalid_argument, "lz4", "small_hash_bytes must be 4 or 5");
  check_table_entries(small_table_entries);
  if (2 * std::size_t{small_table_entries} * blocks_per_cta_ > 48 * 1024)  // a kernel's static shared memory
    throw Error(Errc::invalid_argument, "lz4",
                "blocks_per_cta x small_table_entries x 2 bytes must fit 48 KiB of shared memory");
  k_ = std::make_shared<const DeviceKernels>(
      kernels_for(device_, small_table_entries, blocks_per_cta_, small_hash_bytes));
  // 32 warps an SM, as many as one warp a thread block ever had resident (the 32-block limit), and
  // the rest of the SM's store as L1 cache for the blocks' bytes: the driver would otherwise size
  // shared memory for the most multi-warp blocks that fit, more than a 4096-block call uses,
  // leaving less L1. Measured: docs/lz4.md.
  if (blocks_per_cta_ > 1) k_->compress_small.carve_shared_memory_for(32 / blocks_per_cta_);
}

DeviceLz4::Blocks DeviceLz4::blocks(const std::uint8_t* base, std::span<const unsigned long long> in_at,
                                    std::span<const std::uint32_t> in_len) const {
  std::size_t largest = 0;
  for (std::uint32_t n : in_len) {
    if (n > block_max_bytes(7)) throw Error(Errc::invalid_argument, "lz4", "a block to compress exceeds 4 MiB");
    largest = std::max<std::size_t>(largest, n);
  }
  return {base, upload(device_, in_at), upload(device_, in_len), in_len.size(), largest};
}

DeviceLz4::Compressed DeviceLz4::compress(const Blocks& blocks, bool block_checksums, const Stream* stream) const {
  const std::size_t count = blocks.count;
  const std::size_t slot_bytes = (compress_bound(blocks.largest) + 15) / 16 * 16;
  Compressed c{device_.alloc<std::uint8_t>(std::max<std::size_t>(count * slot_bytes, 1)),
               slot_bytes,
               device_.alloc<std::uint32_t>(std::max<std::size_t>(count, 1)),
               device_.alloc<std::uint32_t>(block_checksums ? std::max<std::size_t>(count, 1) : 1),
               {},
               block_checksums};
  if (count == 0) return c;
  // Blocks under 64 KiB + 11 bytes need only the 16-bit table (less shared memory per block).
  // The table is cut below liblz4's 8192 entries only where that lets more blocks run at once: a
  // few blocks run in one wave at any size and get liblz4's table (and its ratio). The choice
  // depends on the block count alone, so every device makes the same frame of the same input.
  const Kernel& kernel = blocks.largest >= small_block_limit ? k_->compress
                         : count <= full_table_max_blocks    ? k_->compress_few_small
                                                             : k_->compress_small;
  const unsigned per_cta = &kernel == &k_->compress_small ? blocks_per_cta_ : 1;
  kernel.launch({.grid = grid_of(count, per_cta), .block = compress_threads_ * per_cta, .stream = stream}, blocks.base,
                blocks.in_at, blocks.in_len, c.slots, static_cast<unsigned long long>(c.slot_bytes), c.words,
                static_cast<unsigned long long>(count));
  if (block_checksums) {
    std::vector<unsigned long long> slot_at(count);
    for (std::size_t i = 0; i < count; ++i) slot_at[i] = i * c.slot_bytes;
    const DeviceBuffer<unsigned long long> at = upload(device_, std::span<const unsigned long long>(slot_at));
    k_->xxh32.launch({.grid = grid_of(count, hash_threads), .block = hash_threads, .stream = stream}, c.slots, at,
                     c.words, static_cast<unsigned long long>(count), c.hashes);
    if (stream != nullptr) stream->synchronize();  // `at` is freed on return
  }
  c.host_words.resize(count);
  c.words.view().subview(0, count).copy_to(std::span<std::uint32_t>(c.host_words), stream);
  if (stream != nullptr) stream->synchronize();
  return c;
}

void DeviceLz4::gather(const Compressed& c, std::span<const unsigned long long> at, std::uint8_t* out,
                       const Stream* stream) const {
  if (at.empty()) return;
  const DeviceBuffer<unsigned long long> d_at = upload(device_, at);
  const std::uint32_t* hashes = c.checksums ? c.hashes.data() : nullptr;
  k_->gather.launch({.grid = static_cast<std::uint32_t>(at.size()), .block = copy_threads, .stream = stream}, c.slots,
                    static_cast<unsigned long long>(c.slot_bytes), c.words, d_at, hashes, out);
  if (stream != nullptr) stream->synchronize();  // d_at is freed on return
}

void DeviceLz4::scatter(const std::uint8_t* src, std::span<const unsigned long long> src_at,
                        std::span<const std::uint32_t> len, std::uint8_t* dst,
                        std::span<const unsigned long long> dst_at, const Stream* stream) const {
  if (len.empty()) return;
  const DeviceBuffer<unsigned long long> d_src = upload(device_, src_at), d_dst = upload(device_, dst_at);
  const DeviceBuffer<std::uint32_t> d_len = upload(device_, len);
  k_->scatter.launch({.grid = static_cast<std::uint32_t>(len.size()), .block = copy_threads, .stream = stream}, src,
                     d_src, d_len, dst, d_dst);
  if (stream != nullptr) stream->synchronize();
}

DeviceLz4::Section DeviceLz4::encode(BufferView<const std::uint8_t> in, std::size_t block_bytes, bool block_checksums,
                                     const Stream* stream) const {
  const std::size_t count = (in.size() + block_bytes - 1) / block_bytes;
  std::vector<unsigned long long> in_at(count);
  std::vector<std::uint32_t> in_len(count);
  for (std::size_t i = 0; i < count; ++i) {
    in_at[i] = i * block_bytes;
    in_len[i] = static_cast<std::uint32_t>(std::min(block_bytes, in.size() - i * block_bytes));
  }
  const Compressed c = compress(blocks(in.data(), in_at, in_len), block_checksums, stream);
  std::vector<unsigned long long> offsets(count);
  std::size_t total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    offsets[i] = total;
    total += 4 + (c.host_words[i] & ~uncompressed_bit) + (block_checksums ? 4 : 0);
  }
  Section section{device_.alloc<std::uint8_t>(std::max<std::size_t>(total, 1)), total};
  gather(c, offsets, section.bytes.data(), stream);
  return section;
}

DeviceLz4::BlockTable DeviceLz4::table(std::span<const unsigned long long> in_at, std::span<const std::uint32_t> in_len,
                                       std::span<const unsigned long long> out_at,
                                       std::span<const std::uint32_t> caps) const {
  // in_at, out_at (8 bytes an entry), then in_len, caps (4): every array aligned for its type.
  const std::size_t n = in_at.size();
  std::vector<std::uint8_t> packed(24 * n);
  const auto put = [&packed](std::size_t at, auto values) {
    if (!values.empty()) std::memcpy(packed.data() + at, values.data(), values.size_bytes());
  };
  put(0, in_at);
  put(8 * n, out_at);
  put(16 * n, in_len);
  put(20 * n, caps);
  BlockTable t{upload(device_, std::span<const std::uint8_t>(packed)), nullptr, nullptr, nullptr, nullptr, n};
  const std::uint8_t* base = t.storage.data();
  t.in_at = reinterpret_cast<const unsigned long long*>(base);
  t.out_at = reinterpret_cast<const unsigned long long*>(base + 8 * n);
  t.in_len = reinterpret_cast<const std::uint32_t*>(base + 16 * n);
  t.caps = reinterpret_cast<const std::uint32_t*>(base + 20 * n);
  return t;
}

DeviceLz4::BlockTable DeviceLz4::table(std::span<const BlockRef> blocks, std::size_t lo,
                                       std::span<const std::size_t> slot_offsets) const {
  const std::size_t count = blocks.size();
  std::vector<unsigned long long> in_at(count), out_at(count);
  std::vector<std::uint32_t> in_len(count), caps(count);
  for (std::size_t i = 0; i < count; ++i) {
    in_at[i] = blocks[i].offset - lo;
    in_len[i] = blocks[i].stored | (blocks[i].raw ? uncompressed_bit : 0u);
    out_at[i] = slot_offsets[i];
    caps[i] = static_cast<std::uint32_t>(slot_offsets[i + 1] - slot_offsets[i]);
  }
  return table(in_at, in_len, out_at, caps);
}

void DeviceLz4::decode(const std::uint8_t* in, const BlockTable& table, std::uint8_t* out, std::uint32_t* sizes,
                       std::uint32_t* status, const Stream* stream) const {
  if (table.count == 0) return;
  k_->decompress.launch({.grid = static_cast<std::uint32_t>(table.count), .block = decode_threads, .stream = stream},
                        in, table.in_at, table.in_len, out, table.out_at, table.caps, sizes, status);
}

void DeviceLz4::hash(const std::uint8_t* in, const BlockTable& table, std::uint32_t* hashes,
                     const Stream* stream) const {
  if (table.count == 0) return;
  k_->xxh32.launch({.grid = grid_of(table.count, hash_threads), .block = hash_threads, .stream = stream}, in,
                   table.in_at, table.in_len, static_cast<unsigned long long>(table.count), hashes);
}

namespace {

// The parallel walk's room: a node slot per 256 bytes of item (+ 64), what frames of full blocks
// need (64 KiB compresses to 266 bytes with its size word at best), 32 bytes each; a tile's node
// offsets, 2 KiB per 64 KiB. Limits that keep its 32-bit node indices and record offsets exact.
constexpr unsigned long long node_bytes = 256;
constexpr unsigned long long max_parallel_item = 1ull << 38;
constexpr unsigned long long max_node_slots = 0xFFFFFFF0ull;
constexpr unsigned node_threads = 256;
constexpr unsigned max_node_blocks = 1024;  // node kernels loop over the slots with this many blocks at most

unsigned long long node_slots_for(unsigned long long size) {
  return size / node_bytes + 64;
}

// The scan's buffers come from the stream-ordered pool of the stream its kernels run on (the
// default one): a dozen allocations and frees a call, none of them waiting for the device.
template <class T>
DeviceBuffer<T> scratch(const Device& device, const Stream& stream, std::size_t count) {
  return device.alloc<T>(std::max<std::size_t>(count, 1), stream);
}
template <class T>
DeviceBuffer<T> upload_on(const Device& device, const Stream& stream, std::span<const T> host) {
  DeviceBuffer<T> buffer = scratch<T>(device, stream, host.size());
  if (!host.empty()) buffer.view().subview(0, host.size()).copy_from(host, &stream);
  return buffer;
}

}  // namespace

std::vector<std::size_t> scan_parallel_items(std::span<const unsigned long long> item_size) {
  // Estimates (H100; docs/lz4.md): the serial walk takes ~0.9 us a block, and a block of 64 KiB
  // compresses to ~32 KiB (items walk side by side: the largest decides); the parallel walk costs
  // ~60 us of small launches, and reads its items at ~2.5 TB/s. Taking the k largest items
  // parallel costs 60 us + their bytes / 2.5 TB/s + the serial walk of the next largest; the best
  // k wins (0: all serial).
  constexpr double serial_us_per_byte = 0.9 / 32768, parallel_us = 60, parallel_us_per_byte = 1e6 / 2.5e12;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < item_size.size(); ++i)
    if (item_size[i] > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return item_size[a] > item_size[b]; });
  std::size_t best_k = 0;
  double best = order.empty() ? 0.0 : static_cast<double>(item_size[order[0]]) * serial_us_per_byte, bytes = 0;
  for (std::size_t k = 1; k <= order.size(); ++k) {
    bytes += static_cast<double>(item_size[order[k - 1]]);
    const double rest = k < order.size() ? static_cast<double>(item_size[order[k]]) * serial_us_per_byte : 0.0;
    const double cost = parallel_us + bytes * parallel_us_per_byte + rest;
    if (cost < best) best = cost, best_k = k;
  }
  order.resize(best_k);
  return order;
}

DeviceLz4::Scan DeviceLz4::scan(const std::uint8_t* base, std::span<const unsigned long long> item_at,
                                std::span<const unsigned long long> item_size, ScanMode mode, ScanStats* stats) const {
  const std::size_t count = item_at.size();
  Scan out;
  out.first.assign(1, 0);
  if (count == 0) return out;
  // The items walked in parallel (lz4_frame_scan.cu), within the limits of its indices.
  std::vector<std::size_t> chosen;
  if (mode == ScanMode::automatic) {
    chosen = scan_parallel_items(item_size);
  } else if (mode == ScanMode::parallel) {
    for (std::size_t i = 0; i < count; ++i)
      if (item_size[i] > 0) chosen.push_back(i);
  }
  std::vector<unsigned> par_of(count, LZ4K_SCAN_NONE), par_item;
  std::vector<unsigned long long> tile_base{0}, node_base{0};
  unsigned long long widest = 1;
  for (std::size_t i : chosen) {
    const unsigned long long slots = node_slots_for(item_size[i]);
    if (item_size[i] >= max_parallel_item || node_base.back() + slots > max_node_slots) continue;
    const unsigned long long mis = (reinterpret_cast<std::uintptr_t>(base) + item_at[i]) & 15u;
    par_of[i] = static_cast<unsigned>(par_item.size());
    par_item.push_back(static_cast<unsigned>(i));
    tile_base.push_back(tile_base.back() + (item_size[i] + mis + LZ4K_SCAN_TILE - 1) / LZ4K_SCAN_TILE);
    node_base.push_back(node_base.back() + slots);
    widest = std::max(widest, slots);
  }
  const std::size_t par_count = par_item.size();
  unsigned rounds = 0;  // 2^rounds >= the longest path
  while ((1ull << rounds) < widest) ++rounds;

  // Room for a record per KiB (plus a few): what frames of blocks compressing 64 KiB to 1 KiB or
  // more need. Several items, or more records than that, take a second walk with the exact
  // counts, so that the records come back in one copy, packed (a parallel item's graph is kept:
  // the second walk only writes the records again).
  std::vector<unsigned long long> cap(count), at(count);
  for (std::size_t i = 0; i < count; ++i) cap[i] = item_size[i] / 1024 + 16;
  const Stream stream = device_.default_stream();
  const DeviceBuffer<unsigned long long> d_at_items = upload_on(device_, stream, item_at),
                                         d_size = upload_on(device_, stream, item_size);
  DeviceBuffer<unsigned long long> d_count = scratch<unsigned long long>(device_, stream, count);

  // The parallel walk's state (lz4_scan.h), kept across the walks. Nothing when there is none.
  const std::size_t tiles = tile_base.back(), slots = node_base.back();
  const auto room = [&](std::size_t n) { return par_count > 0 ? n : 0; };
  const DeviceBuffer<unsigned> d_par_of = upload_on(device_, stream, std::span<const unsigned>(par_of)),
                               d_par_item = upload_on(device_, stream, std::span<const unsigned>(par_item));
  const DeviceBuffer<unsigned long long> d_tile_base =
                                             upload_on(device_, stream, std::span<const unsigned long long>(tile_base)),
                                         d_node_base =
                                             upload_on(device_, stream, std::span<const unsigned long long>(node_base));
  DeviceBuffer<Lz4ScanItem> d_item = scratch<Lz4ScanItem>(device_, stream, room(count));
  DeviceBuffer<unsigned> d_tile_count = scratch<unsigned>(device_, stream, tiles),
                         d_tile_first = scratch<unsigned>(device_, stream, tiles);
  DeviceBuffer<unsigned short> d_tile_slot = scratch<unsigned short>(device_, stream, tiles * LZ4K_SCAN_TILE_CAP);
  DeviceBuffer<unsigned long long> d_node_pos = scratch<unsigned long long>(device_, stream, slots);
  DeviceBuffer<unsigned> d_next0 = scratch<unsigned>(device_, stream, slots),
                         d_next1 = scratch<unsigned>(device_, stream, slots),
                         d_weight0 = scratch<unsigned>(device_, stream, slots),
                         d_weight1 = scratch<unsigned>(device_, stream, slots),
                         d_off = scratch<unsigned>(device_, stream, slots),
                         d_tag = scratch<unsigned>(device_, stream, slots),
                         d_more = scratch<unsigned>(device_, stream, room(rounds + 1));
  Lz4ScanPlan plan{};
  plan.base = base;
  plan.item_at = d_at_items.data();
  plan.item_size = d_size.data();
  plan.count = count;
  plan.record_count = d_count.data();
  plan.item = d_item.data();
  plan.par_of = d_par_of.data();
  plan.par_item = d_par_item.data();
  plan.par_count = par_count;
  plan.tile_base = d_tile_base.data();
  plan.node_base = d_node_base.data();
  plan.tiles = tiles;
  plan.node_slots = slots;
  plan.tile_count = d_tile_count.data();
  plan.tile_first = d_tile_first.data();
  plan.tile_slot = d_tile_slot.data();
  plan.node_pos = d_node_pos.data();
  plan.node_next[0] = d_next0.data();
  plan.node_next[1] = d_next1.data();
  plan.node_weight[0] = d_weight0.data();
  plan.node_weight[1] = d_weight1.data();
  plan.node_off = d_off.data();
  plan.node_tag = d_tag.data();
  plan.more = d_more.data();
  if (par_count > 0) {
    d_tag.fill(LZ4K_TAG_UNMARKED, &stream);
    d_more.fill(0u, &stream);
  }
  const LaunchConfig per_item{.grid = grid_of(count, scan_threads), .block = scan_threads};
  const LaunchConfig per_node{.grid = std::min<std::uint32_t>(grid_of(slots, node_threads), max_node_blocks),
                              .block = node_threads};

  for (int pass = 0;; ++pass) {
    std::size_t total = 0;
    for (std::size_t i = 0; i < count; ++i) {
      at[i] = total;
      total += cap[i];
    }
    const DeviceBuffer<unsigned long long> d_rec_at =
                                               upload_on(device_, stream, std::span<const unsigned long long>(at)),
                                           d_cap = upload_on(device_, stream, std::span<const unsigned long long>(cap));
    DeviceBuffer<Lz4ScanRecord> d_records = scratch<Lz4ScanRecord>(device_, stream, total);
    if (par_count == 0) {
      k_->frame_scan.launch(per_item, base, d_at_items, d_size, static_cast<unsigned long long>(count), d_rec_at, d_cap,
                            d_records, d_count);
    } else {
      plan.record_at = d_rec_at.data();
      plan.record_cap = d_cap.data();
      plan.records = d_records.data();
      k_->scan_head.launch(per_item, plan);
      if (pass == 0) {  // the graph and the path: the same for every walk
        if (tiles > 0)
          k_->scan_tiles.launch({.grid = static_cast<std::uint32_t>(tiles), .block = LZ4K_SCAN_THREADS}, plan);
        k_->scan_index.launch({.grid = static_cast<std::uint32_t>(par_count), .block = LZ4K_SCAN_THREADS}, plan);
        k_->scan_link.launch(per_node, plan);
        for (unsigned k = 0; k < rounds; ++k) k_->scan_round.launch(per_node, plan, k);
      }
      k_->scan_emit.launch(per_node, plan);
      k_->scan_tail.launch(per_item, plan);
    }
    const std::vector<unsigned long long> made = download(d_count.view(), count);
    const bool packed = made == cap || (count == 1 && made[0] <= cap[0]);
    if (pass == 1 || packed) {  // the second walk always fits: the counts do not change
      const std::size_t n = at[count - 1] + made[count - 1];
      out.records = download(d_records.view(), n);
      for (std::size_t i = 0; i < count; ++i) out.first.push_back(at[i] + made[i]);
      if (stats) {
        *stats = {par_count, 0};
        if (par_count > 0) {
          const std::vector<Lz4ScanItem> items = download(d_item.view(), count);
          for (unsigned i : par_item)
            if (items[i].stopped) stats->path_records += items[i].path;
        }
      }
      return out;
    }
    cap = made;
  }
}

}  // namespace opkit::ops::lz4

namespace opkit::ops {

const KernelSupport& lz4_support() {
  return lz4::kernel_set();
}

}  // namespace opkit::ops
