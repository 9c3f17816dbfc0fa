// The device engine: opkit's LZ4 kernels (kernels/*.cu) compiled once per device and launched
// over runs of blocks. Host memory goes up, block sizes come down, the host lays out the frame
// (a prefix sum of the sizes) and a gather kernel packs it on the device before it comes down.
#include <map>
#include <mutex>

#include "core/embedded.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/module.hpp"
#include "ops/lz4/block_codec.hpp"
#include "ops/lz4/kernels/lz4_status.h"

namespace opkit::ops::lz4 {
namespace {

constexpr unsigned decode_threads = 32;    // LZ4K_DECODE_THREADS
constexpr unsigned compress_threads = 64;  // LZ4K_COMPRESS_THREADS
constexpr unsigned gather_threads = 128;
constexpr unsigned hash_threads = 128;

std::string embedded(const std::string& name) {
  std::string_view text = opkit::detail::embedded_source(name);
  if (text.empty()) throw Error(Errc::not_found, "lz4", "kernel source " + name + " is not embedded");
  return std::string(text);
}

}  // namespace

Program kernel_program(const std::string& file) {
  return Program(embedded("lz4/" + file))
      .name(file)
      .header("lz4_status.h", embedded("lz4/lz4_status.h"))
      .header("xxh32.cuh", embedded("lz4/xxh32.cuh"));
}

namespace {

// The four kernels of one device, compiled on first use and kept for the process.
struct DeviceKernels {
  Kernel compress, decompress, xxh32, gather;
};

const DeviceKernels& kernels_for(const Device& device) {
  static std::mutex mutex;
  static std::map<const void*, std::pair<Device, std::unique_ptr<DeviceKernels>>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(&device.impl());
  if (it == cache.end()) {
    auto k = std::make_unique<DeviceKernels>(DeviceKernels{
        device.compile(kernel_program("lz4_compress.cu")).kernel("lz4_compress"),
        device.compile(kernel_program("lz4_decompress.cu")).kernel("lz4_decompress"),
        device.compile(kernel_program("lz4_xxh32.cu")).kernel("lz4_xxh32"),
        device.compile(kernel_program("lz4_gather.cu")).kernel("lz4_gather")});
    it = cache.emplace(&device.impl(), std::make_pair(device, std::move(k))).first;
  }
  return *it->second.second;
}

template <class T>
DeviceBuffer<T> upload(const Device& device, std::span<const T> host) {
  DeviceBuffer<T> buffer = device.alloc<T>(std::max<std::size_t>(host.size(), 1));
  if (!host.empty()) BufferView<T>(buffer).subview(0, host.size()).copy_from(host);
  return buffer;
}

template <class T>
std::vector<T> download(const DeviceBuffer<T>& buffer, std::size_t count) {
  std::vector<T> host(count);
  if (count != 0) BufferView<T>(buffer).subview(0, count).copy_to(std::span<T>(host));
  return host;
}

std::uint32_t grid_of(std::size_t count, unsigned per_block) {
  return static_cast<std::uint32_t>((count + per_block - 1) / per_block);
}

std::string status_problem(unsigned status, std::size_t cap) {
  switch (status) {
    case LZ4K_INPUT_TRUNCATED: return "corrupt LZ4 block: a length, offset or literal run reads past its end";
    case LZ4K_OUTPUT_OVERFLOW: return "corrupt LZ4 block: it decodes to more than " + std::to_string(cap) + " bytes";
    case LZ4K_BAD_OFFSET: return "corrupt LZ4 block: a match offset is 0 or points before the block's start";
    case LZ4K_ENDS_WITH_MATCH: return "corrupt LZ4 block: its last sequence is not literals only";
    default: return "corrupt LZ4 block (status " + std::to_string(status) + ")";
  }
}

class KernelCodec final : public BlockCodec {
 public:
  explicit KernelCodec(Device device) : device_(std::move(device)), k_(kernels_for(device_)) {}

  void encode(std::span<const std::uint8_t> input, std::size_t block_bytes, bool block_checksums,
              std::vector<std::uint8_t>& section) override {
    const std::size_t count = (input.size() + block_bytes - 1) / block_bytes;
    if (count == 0) return;
    const std::size_t slot_bytes = (compress_bound(block_bytes) + 15) / 16 * 16;
    DeviceBuffer<std::uint8_t> in = upload(device_, input);
    DeviceBuffer<std::uint8_t> slots = device_.alloc<std::uint8_t>(count * slot_bytes);
    DeviceBuffer<std::uint32_t> words = device_.alloc<std::uint32_t>(count);
    k_.compress.launch({.grid = static_cast<std::uint32_t>(count), .block = compress_threads}, in,
                       static_cast<unsigned long long>(input.size()), static_cast<unsigned>(block_bytes), slots,
                       static_cast<unsigned long long>(slot_bytes), words);
    DeviceBuffer<std::uint32_t> hashes = device_.alloc<std::uint32_t>(block_checksums ? count : 1);
    if (block_checksums) {
      std::vector<unsigned long long> slot_at(count);
      for (std::size_t i = 0; i < count; ++i) slot_at[i] = i * slot_bytes;
      DeviceBuffer<unsigned long long> at = upload(device_, std::span<const unsigned long long>(slot_at));
      k_.xxh32.launch({.grid = grid_of(count, hash_threads), .block = hash_threads}, slots, at, words,
                      static_cast<unsigned long long>(count), hashes);
    }
    const std::vector<std::uint32_t> sizes = download(words, count);
    std::vector<unsigned long long> offsets(count);
    std::size_t total = 0;
    for (std::size_t i = 0; i < count; ++i) {
      offsets[i] = total;
      total += 4 + (sizes[i] & ~uncompressed_bit) + (block_checksums ? 4 : 0);
    }
    DeviceBuffer<unsigned long long> at = upload(device_, std::span<const unsigned long long>(offsets));
    DeviceBuffer<std::uint8_t> packed = device_.alloc<std::uint8_t>(total);
    const std::uint32_t* hash_ptr = block_checksums ? hashes.data() : nullptr;
    k_.gather.launch({.grid = static_cast<std::uint32_t>(count), .block = gather_threads}, slots,
                     static_cast<unsigned long long>(slot_bytes), words, at, hash_ptr, packed);
    const std::size_t start = section.size();
    section.resize(start + total);
    BufferView<std::uint8_t>(packed).copy_to(std::span<std::uint8_t>(section.data() + start, total));
  }

  std::vector<std::size_t> decode(std::span<const std::uint8_t> input, std::span<const BlockRef> blocks,
                                  std::span<const std::size_t> slot_offsets, std::span<std::uint8_t> slots,
                                  bool verify) override {
    const std::size_t count = blocks.size();
    if (count == 0) return {};
    const std::size_t lo = blocks.front().offset, hi = blocks.back().offset + blocks.back().stored;
    std::vector<unsigned long long> in_at(count), out_at(count);
    std::vector<std::uint32_t> in_len(count), caps(count);
    bool any_checksum = false;
    for (std::size_t i = 0; i < count; ++i) {
      in_at[i] = blocks[i].offset - lo;
      in_len[i] = blocks[i].stored | (blocks[i].raw ? uncompressed_bit : 0u);
      out_at[i] = slot_offsets[i];
      caps[i] = static_cast<std::uint32_t>(slot_offsets[i + 1] - slot_offsets[i]);
      any_checksum = any_checksum || blocks[i].checksum.has_value();
    }
    DeviceBuffer<std::uint8_t> in = upload(device_, input.subspan(lo, hi - lo));
    DeviceBuffer<unsigned long long> d_in_at = upload(device_, std::span<const unsigned long long>(in_at));
    DeviceBuffer<std::uint32_t> d_in_len = upload(device_, std::span<const std::uint32_t>(in_len));
    DeviceBuffer<unsigned long long> d_out_at = upload(device_, std::span<const unsigned long long>(out_at));
    DeviceBuffer<std::uint32_t> d_caps = upload(device_, std::span<const std::uint32_t>(caps));
    DeviceBuffer<std::uint8_t> out = device_.alloc<std::uint8_t>(std::max<std::size_t>(slots.size(), 1));
    DeviceBuffer<std::uint32_t> d_sizes = device_.alloc<std::uint32_t>(count);
    DeviceBuffer<std::uint32_t> d_status = device_.alloc<std::uint32_t>(count);
    std::vector<std::uint32_t> hashes;
    if (verify && any_checksum) {
      DeviceBuffer<std::uint32_t> d_hashes = device_.alloc<std::uint32_t>(count);
      k_.xxh32.launch({.grid = grid_of(count, hash_threads), .block = hash_threads}, in, d_in_at, d_in_len,
                      static_cast<unsigned long long>(count), d_hashes);
      hashes = download(d_hashes, count);
      for (std::size_t i = 0; i < count; ++i)  // a block that fails its checksum is not decoded
        if (blocks[i].checksum && hashes[i] != *blocks[i].checksum)
          throw_block_error(blocks[i], checksum_problem(*blocks[i].checksum, hashes[i]));
    }
    k_.decompress.launch({.grid = static_cast<std::uint32_t>(count), .block = decode_threads}, in, d_in_at, d_in_len,
                         out, d_out_at, d_caps, d_sizes, d_status);
    const std::vector<std::uint32_t> status = download(d_status, count);
    for (std::size_t i = 0; i < count; ++i)
      if (status[i] != LZ4K_OK) throw_block_error(blocks[i], status_problem(status[i], caps[i]));
    const std::vector<std::uint32_t> sizes = download(d_sizes, count);
    if (!slots.empty()) BufferView<std::uint8_t>(out).subview(0, slots.size()).copy_to(slots);
    return {sizes.begin(), sizes.end()};
  }

 private:
  Device device_;
  const DeviceKernels& k_;
};

}  // namespace

std::unique_ptr<BlockCodec> kernel_block_codec(const Device& device) { return std::make_unique<KernelCodec>(device); }

}  // namespace opkit::ops::lz4
