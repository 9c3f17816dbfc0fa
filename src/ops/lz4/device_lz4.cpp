// DeviceLz4: the embedded LZ4 kernels, compiled once per device by the operator's kernel set, and
// the launches of compression (compress, hash, lay out, gather) and decompression.
#include "lz4/device_lz4.hpp"

#include <string>

#include "lz4/block_codec.hpp"
#include "opkit/error.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/module.hpp"
#include "opkit_embedded.hpp"

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

template <class T>
DeviceBuffer<T> upload(const Device& device, std::span<const T> host) {
  DeviceBuffer<T> buffer = device.alloc<T>(std::max<std::size_t>(host.size(), 1));
  if (!host.empty()) BufferView<T>(buffer).subview(0, host.size()).copy_from(host);
  return buffer;
}

std::uint32_t grid_of(std::size_t count, unsigned per_block) {
  return static_cast<std::uint32_t>((count + per_block - 1) / per_block);
}

}  // namespace

Program kernel_program(const std::string& file) {
  return Program(embedded("lz4/" + file))
      .name(file)
      .header("lz4_status.h", embedded("lz4/lz4_status.h"))
      .header("xxh32.cuh", embedded("lz4/xxh32.cuh"));
}

struct DeviceKernels {
  Kernel compress, decompress, xxh32, gather;
};

namespace {

// The one specialisation of each kernel file: the kernel set compiles it once per device.
struct Lz4Params {
  std::string file;
  auto operator<=>(const Lz4Params&) const = default;
};

const KernelSet<Lz4Params>& kernel_set() {
  // Never destroyed: its kernels keep modules loaded, which must not be unloaded during exit.
  static const auto* set = [] {
    auto* s = new KernelSet<Lz4Params>("lz4");
    s->add_language("cuda", {[](const Lz4Params& p) { return kernel_program(p.file); }});
    return s;
  }();
  return *set;
}

DeviceKernels kernels_for(const Device& device) {
  const KernelSet<Lz4Params>& set = kernel_set();
  return {set.kernel(device, {"lz4_compress.cu"}, "lz4_compress"),
          set.kernel(device, {"lz4_decompress.cu"}, "lz4_decompress"),
          set.kernel(device, {"lz4_xxh32.cu"}, "lz4_xxh32"), set.kernel(device, {"lz4_gather.cu"}, "lz4_gather")};
}

}  // namespace

DeviceLz4::DeviceLz4(Device device)
    : device_(std::move(device)), k_(std::make_shared<const DeviceKernels>(kernels_for(device_))) {}

DeviceLz4::Section DeviceLz4::encode(BufferView<const std::uint8_t> in, std::size_t block_bytes, bool block_checksums,
                                     const Stream* stream) const {
  const std::size_t count = (in.size() + block_bytes - 1) / block_bytes;
  if (count == 0) return {device_.alloc<std::uint8_t>(1), 0};
  const std::size_t slot_bytes = (compress_bound(block_bytes) + 15) / 16 * 16;
  DeviceBuffer<std::uint8_t> slots = device_.alloc<std::uint8_t>(count * slot_bytes);
  DeviceBuffer<std::uint32_t> words = device_.alloc<std::uint32_t>(count);
  k_->compress.launch({.grid = static_cast<std::uint32_t>(count), .block = compress_threads, .stream = stream},
                     in.data(), static_cast<unsigned long long>(in.size()), static_cast<unsigned>(block_bytes), slots,
                     static_cast<unsigned long long>(slot_bytes), words);
  DeviceBuffer<std::uint32_t> hashes = device_.alloc<std::uint32_t>(block_checksums ? count : 1);
  if (block_checksums) {
    std::vector<unsigned long long> slot_at(count);
    for (std::size_t i = 0; i < count; ++i) slot_at[i] = i * slot_bytes;
    DeviceBuffer<unsigned long long> at = upload(device_, std::span<const unsigned long long>(slot_at));
    k_->xxh32.launch({.grid = grid_of(count, hash_threads), .block = hash_threads, .stream = stream}, slots, at, words,
                    static_cast<unsigned long long>(count), hashes);
  }
  std::vector<std::uint32_t> sizes(count);
  BufferView<std::uint32_t>(words).copy_to(std::span<std::uint32_t>(sizes), stream);
  if (stream != nullptr) stream->synchronize();
  std::vector<unsigned long long> offsets(count);
  std::size_t total = 0;
  for (std::size_t i = 0; i < count; ++i) {
    offsets[i] = total;
    total += 4 + (sizes[i] & ~uncompressed_bit) + (block_checksums ? 4 : 0);
  }
  DeviceBuffer<unsigned long long> at = upload(device_, std::span<const unsigned long long>(offsets));
  Section section{device_.alloc<std::uint8_t>(total), total};
  const std::uint32_t* hash_ptr = block_checksums ? hashes.data() : nullptr;
  k_->gather.launch({.grid = static_cast<std::uint32_t>(count), .block = gather_threads, .stream = stream}, slots,
                   static_cast<unsigned long long>(slot_bytes), words, at, hash_ptr, section.bytes);
  if (stream != nullptr) stream->synchronize();  // the slots are freed on return
  return section;
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
  return {upload(device_, std::span<const unsigned long long>(in_at)),
          upload(device_, std::span<const unsigned long long>(out_at)),
          upload(device_, std::span<const std::uint32_t>(in_len)),
          upload(device_, std::span<const std::uint32_t>(caps)), count};
}

void DeviceLz4::decode(BufferView<const std::uint8_t> in, const BlockTable& table, BufferView<std::uint8_t> out,
                       BufferView<std::uint32_t> sizes, BufferView<std::uint32_t> status, const Stream* stream) const {
  if (table.count == 0) return;
  k_->decompress.launch({.grid = static_cast<std::uint32_t>(table.count), .block = decode_threads, .stream = stream},
                       in.data(), table.in_at, table.in_len, out.data(), table.out_at, table.caps, sizes.data(),
                       status.data());
}

void DeviceLz4::hash(BufferView<const std::uint8_t> in, const BlockTable& table, BufferView<std::uint32_t> hashes,
                     const Stream* stream) const {
  if (table.count == 0) return;
  k_->xxh32.launch({.grid = grid_of(table.count, hash_threads), .block = hash_threads, .stream = stream}, in.data(),
                  table.in_at, table.in_len, static_cast<unsigned long long>(table.count), hashes.data());
}

}  // namespace opkit::ops::lz4
