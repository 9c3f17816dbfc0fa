// DeviceLz4: the LZ4 kernels of one device as device-resident steps (data already in device
// memory, results left there). The device-memory API (device_frames.cpp) and the kernel engine
// for host data (kernel_codec.cpp) are built from them; bench/lz4_bench.cpp times them with events.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "lz4/frame_format.hpp"
#include "lz4/kernels/lz4_scan.h"
#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::lz4 {

struct DeviceKernels;

class DeviceLz4 {
 public:
  // The kernel set compiles the kernels on the device's first use. small_table_entries: the
  // compressor's 16-bit table entries for blocks under 64 KiB + 11 bytes when a call has more
  // than full_table_max_blocks of them (a multiple of 8 from 1024 to 8192; fewer blocks get
  // liblz4's 8192). The default, 2624 (5,248 bytes of shared memory: with the 1 KiB the GPU
  // reserves a block, 32 resident blocks take exactly the 196 KiB shared-memory carve-out, so a
  // 256 MiB input's 4096 blocks run in one wave and the rest of each SM's store stays L1 cache for
  // the blocks' bytes; larger tables pass to the 228 KiB carve-out, which leaves 28 KiB of L1 and
  // compressed 17% slower on an H100), with the 5-byte hash (docs/lz4.md).
  // bench/lz4_bench.cpp compares it with 8192. compress_threads: the compressor's
  // threads per LZ4 block (1..32; 0: the device's choice, 32 on a GPU, 1 on the CPU backend,
  // whose threads of a block run one after another, so that more of them only add fiber
  // switches at the parse's barriers). blocks_per_cta: LZ4 blocks a thread block of the
  // compressor's small-table kernel (1, 2 or 4 on a GPU at 32 threads, else 1; 0: the device's
  // choice, default_blocks_per_cta where allowed).
  static constexpr unsigned default_small_table_entries = 2624;
  // Measured (docs/lz4.md): 2 and 4 a thread block, with the carve-out hint that keeps the SM's
  // spare store as L1, did not beat one at the tables within the 3% of liblz4's ratio.
  static constexpr unsigned default_blocks_per_cta = 1;
  // Up to this many blocks a call, the 16-bit table has liblz4's 8192 entries (16 KiB: 13 blocks
  // an SM on sm_90, so 1024 blocks still run in one wave on a GPU of 80 SMs or more).
  static constexpr std::size_t full_table_max_blocks = 1024;
  // small_hash_bytes: the bytes of a position the smaller table hashes, 4 (liblz4's) or 5 (fewer
  // 4-byte-only matches crowd out longer ones: a better ratio at the same table, and fewer short
  // matches to encode; measured in docs/lz4.md).
  static constexpr unsigned default_small_hash_bytes = 5;
  explicit DeviceLz4(Device device, unsigned small_table_entries = default_small_table_entries,
                     unsigned compress_threads = 0, unsigned blocks_per_cta = 0,
                     unsigned small_hash_bytes = default_small_hash_bytes);
  const Device& device() const { return device_; }
  unsigned blocks_per_cta() const { return blocks_per_cta_; }

  // Blocks to compress: block i is base[in_at[i], + in_len[i]), at most 4 MiB each.
  struct Blocks {
    const std::uint8_t* base = nullptr;
    DeviceBuffer<unsigned long long> in_at;
    DeviceBuffer<std::uint32_t> in_len;
    std::size_t count = 0, largest = 0;
  };
  Blocks blocks(const std::uint8_t* base, std::span<const unsigned long long> in_at,
                std::span<const std::uint32_t> in_len) const;

  // Compressed blocks, each in a slot of its own; words[i] is block i's size word (bit 31: raw),
  // also on the host (the compress step waits for them); hashes[i] its xxHash32 when asked.
  struct Compressed {
    DeviceBuffer<std::uint8_t> slots;
    std::size_t slot_bytes = 0;
    DeviceBuffer<std::uint32_t> words, hashes;
    std::vector<std::uint32_t> host_words;
    bool checksums = false;
  };
  Compressed compress(const Blocks& blocks, bool block_checksums, const Stream* stream = nullptr) const;
  // Writes block i of `c` as a frame lays it out (size word, stored bytes, checksum) at out + at[i].
  void gather(const Compressed& c, std::span<const unsigned long long> at, std::uint8_t* out,
              const Stream* stream = nullptr) const;
  // Copies entry i: dst[dst_at[i], + len[i]) = src[src_at[i], ...).
  void scatter(const std::uint8_t* src, std::span<const unsigned long long> src_at, std::span<const std::uint32_t> len,
               std::uint8_t* dst, std::span<const unsigned long long> dst_at, const Stream* stream = nullptr) const;

  // The packed block section of a frame (size words, stored bytes, optional block checksums;
  // no end mark) for `in` in blocks of block_bytes: `size` bytes of `bytes`.
  struct Section {
    DeviceBuffer<std::uint8_t> bytes;
    std::size_t size = 0;
  };
  Section encode(BufferView<const std::uint8_t> in, std::size_t block_bytes, bool block_checksums,
                 const Stream* stream = nullptr) const;

  // Where each block to decode lies: block i reads in[in_at[i], + in_len[i] & 0x7FFFFFFF) (bit 31:
  // raw) and writes out[out_at[i], + caps[i]). The four arrays share one allocation, uploaded in
  // one copy (four pageable copies cost 0.1-0.27 ms a 4096-block call on an H100).
  struct BlockTable {
    DeviceBuffer<std::uint8_t> storage;
    const unsigned long long *in_at = nullptr, *out_at = nullptr;
    const std::uint32_t *in_len = nullptr, *caps = nullptr;
    std::size_t count = 0;
  };
  BlockTable table(std::span<const unsigned long long> in_at, std::span<const std::uint32_t> in_len,
                   std::span<const unsigned long long> out_at, std::span<const std::uint32_t> caps) const;
  // The table for consecutive blocks of one input, `lo` being the input offset at in[0].
  BlockTable table(std::span<const BlockRef> blocks, std::size_t lo, std::span<const std::size_t> slot_offsets) const;

  // Decoded sizes and LZ4K_* statuses (kernels/lz4_status.h) per block.
  void decode(const std::uint8_t* in, const BlockTable& table, std::uint8_t* out, std::uint32_t* sizes,
              std::uint32_t* status, const Stream* stream = nullptr) const;
  // lz4_frame_scan.cu's walk over items base[item_at[i], + item_size[i]): item i's records (the
  // bytes where the frame parser will read) are records[first[i], first[i + 1]), in input order.
  // The records do not depend on the mode: `automatic` walks the items where it pays in parallel
  // (scan_parallel_items), `serial` none of them, `parallel` every non-empty one (for tests).
  struct Scan {
    std::vector<Lz4ScanRecord> records;
    std::vector<std::size_t> first;
  };
  enum class ScanMode { automatic, serial, parallel };
  struct ScanStats {
    std::size_t parallel_items = 0;  // items walked in parallel
    std::size_t path_records = 0;    // records their graphs gave (the rest: serial walks)
  };
  Scan scan(const std::uint8_t* base, std::span<const unsigned long long> item_at,
            std::span<const unsigned long long> item_size, ScanMode mode = ScanMode::automatic,
            ScanStats* stats = nullptr) const;

  // xxHash32 of each block's stored bytes.
  void hash(const std::uint8_t* in, const BlockTable& table, std::uint32_t* hashes,
            const Stream* stream = nullptr) const;

 private:
  Device device_;
  unsigned compress_threads_, blocks_per_cta_;
  std::shared_ptr<const DeviceKernels> k_;
};

// The items (indices) the automatic scan walks in parallel, largest first: those whose serial walk
// would take longer than reading them all (device_lz4.cpp gives the estimates).
std::vector<std::size_t> scan_parallel_items(std::span<const unsigned long long> item_size);

// Items of a batch are addressed from the lowest one: its data (null when all are empty), and
// the byte offset of p from there.
inline const std::uint8_t* lowest(std::span<const BufferView<const std::uint8_t>> items) {
  const std::uint8_t* base = nullptr;
  for (const auto& item : items)
    if (!item.empty() && (base == nullptr || std::less<>()(item.data(), base))) base = item.data();
  return base;
}
inline unsigned long long from_base(const std::uint8_t* base, const std::uint8_t* p) {
  return static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(base));
}

// Copies a host array into a new device buffer (at least one element, so that empty is valid).
template <class T>
DeviceBuffer<T> upload(const Device& device, std::span<const T> host) {
  DeviceBuffer<T> buffer = device.alloc<T>(host.empty() ? 1 : host.size());
  if (!host.empty()) buffer.view().subview(0, host.size()).copy_from(host);
  return buffer;
}

template <class T>
std::vector<std::remove_const_t<T>> download(BufferView<T> buffer, std::size_t count) {
  std::vector<std::remove_const_t<T>> host(count);
  if (count != 0) buffer.subview(0, count).copy_to(std::span<std::remove_const_t<T>>(host));
  return host;
}

}  // namespace opkit::ops::lz4
