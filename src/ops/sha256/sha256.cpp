// The public SHA-256 / SHA-256d batch functions: input checks, the choice of device, and for host
// data on a GPU a pipeline of chunks that fit device memory (upload of chunk k+1 and download of
// chunk k-1 overlap the hashing of chunk k).
#include "opkit/ops/sha256.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "opkit/error.hpp"
#include "opkit/sha256_hasher.hpp"
#include "sha256_cpu.hpp"

namespace opkit::ops {
namespace {

// Host bytes per chunk on the GPU: large enough that a launch and two copies amortise, small
// enough to leave most of the device to its other users.
constexpr std::size_t preferred_chunk_bytes = std::size_t{256} << 20;

std::size_t digest_count(std::size_t digest_bytes) {
  if (digest_bytes % sha256_digest_bytes != 0)
    throw Error(Errc::invalid_argument, "sha256",
                "digest buffer of " + std::to_string(digest_bytes) + " bytes is not a multiple of 32");
  return digest_bytes / sha256_digest_bytes;
}

void check_fixed(std::size_t data_bytes, std::size_t message_bytes, std::size_t count) {
  if (message_bytes == 0 ? data_bytes != 0 : (data_bytes % message_bytes != 0 || data_bytes / message_bytes != count))
    throw Error(Errc::invalid_argument, "sha256",
                std::to_string(data_bytes) + " bytes of data are not " + std::to_string(count) + " messages of " +
                    std::to_string(message_bytes) + " bytes (the digest buffer holds " + std::to_string(count) +
                    " digests)");
}

void check_offsets(std::span<const std::uint64_t> offsets, std::size_t data_bytes, std::size_t count) {
  if (offsets.size() != count + 1)
    throw Error(Errc::invalid_argument, "sha256",
                std::to_string(count) + " digests need " + std::to_string(count + 1) + " offsets, got " +
                    std::to_string(offsets.size()));
  for (std::size_t i = 0; i < count; ++i)
    if (offsets[i + 1] < offsets[i] || offsets[i + 1] > data_bytes)
      throw Error(Errc::invalid_argument, "sha256",
                  "offsets of message " + std::to_string(i) + " ([" + std::to_string(offsets[i]) + ", " +
                      std::to_string(offsets[i + 1]) + ")) run backwards or past the end of the data (" +
                      std::to_string(data_bytes) + " bytes)");
  if (count == 0 && !offsets.empty() && offsets[0] > data_bytes)
    throw Error(Errc::invalid_argument, "sha256", "offset past the end of the data");
}

// Below this (messages and bytes), the automatic choice keeps host data on the CPU: a launch and
// two copies cost more than OpenSSL needs for the whole batch.
constexpr std::size_t small_batch_messages = 4096;
constexpr std::size_t small_batch_bytes = std::size_t{1} << 20;

// Where host data is hashed: nullopt means the host CPU (OpenSSL).
std::optional<Device> choose_device(const HashOptions& options, std::size_t count, std::size_t bytes) {
  if (options.host_cpu) return std::nullopt;
  if (options.device) {
    sha256_support().require(*options.device);
    return options.device;
  }
  if (count < small_batch_messages && bytes < small_batch_bytes) return std::nullopt;
  std::vector<Device> gpus = sha256_support().gpus();
  if (gpus.empty()) return std::nullopt;
  return gpus.front();
}

// Device buffers for one chunk of the pipeline.
struct ChunkSlot {
  DeviceBuffer<std::uint8_t> data;
  DeviceBuffer<std::uint64_t> offsets;
  DeviceBuffer<std::uint8_t> digests;
  Stream stream;
  std::size_t first = 0, count = 0;  // messages held, for the download
  // The chunk's offsets on the host, which its queued copy reads: the slot's own, unchanged until
  // the slot's work has been downloaded (a GPU may read pageable memory when the copy runs, not
  // when it is queued: src/ops/cipher/host_bytes_in_flight.hpp).
  std::vector<std::uint64_t> host_offsets{};
};

ChunkSlot make_slot(const Device& device, std::size_t data_bytes, std::size_t max_count, bool with_offsets) {
  try {
    return ChunkSlot{device.alloc<std::uint8_t>(std::max<std::size_t>(data_bytes, 1)),
                     device.alloc<std::uint64_t>(with_offsets ? max_count + 1 : 1),
                     device.alloc<std::uint8_t>(max_count * sha256_digest_bytes), device.create_stream()};
  } catch (const Error& e) {
    if (e.kind() != Errc::memory) throw;
    throw Error(
        Errc::memory, "sha256",
        "cannot allocate " + std::to_string((data_bytes + max_count * 40) >> 20) + " MiB on " + device.info().name +
            " for a chunk of the batch (free: " + std::to_string(device.free_memory() >> 20) + " MiB): " + e.message());
  }
}

// Chunk bytes for this device: the caller's, else the preferred size, less where the device has
// little free memory.
std::size_t chunk_bytes_for(const Device& device, const HashOptions& options) {
  if (options.chunk_bytes != 0) return options.chunk_bytes;
  const std::size_t free_bytes = device.free_memory();
  return std::max<std::size_t>(std::min(preferred_chunk_bytes, free_bytes / 8), std::size_t{1} << 20);
}

// Runs `prepare(k)` = (first message, count, data bytes) chunk by chunk through two slots.
template <class Upload>
void pipeline(const Device& device, std::size_t count, std::size_t slot_data_bytes, std::size_t slot_count,
              bool with_offsets, std::span<std::uint8_t> digests, Upload upload_and_launch) {
  std::array<std::optional<ChunkSlot>, 2> slots;
  auto download = [&](ChunkSlot& slot) {
    if (slot.count == 0) return;
    slot.digests.view()
        .subview(0, slot.count * sha256_digest_bytes)
        .copy_to(digests.subspan(slot.first * sha256_digest_bytes, slot.count * sha256_digest_bytes), &slot.stream);
    slot.stream.synchronize();
    slot.count = 0;
  };
  std::size_t first = 0;
  for (std::size_t k = 0; first < count; ++k) {
    auto& slot = slots[k % 2];
    if (!slot) slot.emplace(make_slot(device, slot_data_bytes, slot_count, with_offsets));
    download(*slot);  // chunk k-2, long finished
    const std::size_t taken = upload_and_launch(*slot, first);
    slot->first = first;
    slot->count = taken;
    first += taken;
    if (k > 0 && slots[(k + 1) % 2]) download(*slots[(k + 1) % 2]);  // chunk k-1, while chunk k runs
  }
  for (auto& slot : slots)
    if (slot) download(*slot);
}

void gpu_fixed(const Device& device, HashAlgo algo, std::span<const std::uint8_t> data, std::size_t message_bytes,
               std::span<std::uint8_t> digests, std::size_t count, const HashOptions& options) {
  const Sha256Kernel kernel(device);
  const std::size_t chunk_bytes = chunk_bytes_for(device, options);
  // Messages per chunk: as many as fit, at least one (a single message larger than the chunk
  // gets a buffer of its own size), and so many that empty messages do not loop forever.
  const std::size_t per_chunk =
      std::min(count, message_bytes == 0 ? chunk_bytes / sha256_digest_bytes
                                         : std::max<std::size_t>(1, chunk_bytes / (message_bytes + 32)));
  pipeline(
      device, count, per_chunk * message_bytes, per_chunk, false, digests, [&](ChunkSlot& slot, std::size_t first) {
        const std::size_t n = std::min(per_chunk, count - first);
        auto in = slot.data.view().subview(0, n * message_bytes);
        if (n * message_bytes != 0) in.copy_from(data.subspan(first * message_bytes, n * message_bytes), &slot.stream);
        kernel.fixed(algo, in, message_bytes, slot.digests.view().subview(0, n * sha256_digest_bytes), &slot.stream);
        return n;
      });
}

void gpu_variable(const Device& device, HashAlgo algo, std::span<const std::uint8_t> data,
                  std::span<const std::uint64_t> offsets, std::span<std::uint8_t> digests, std::size_t count,
                  const HashOptions& options) {
  const Sha256Kernel kernel(device);
  const std::size_t chunk_bytes = chunk_bytes_for(device, options);
  std::size_t longest = 0;
  for (std::size_t i = 0; i < count; ++i) longest = std::max<std::size_t>(longest, offsets[i + 1] - offsets[i]);
  const std::size_t total = offsets[count] - offsets[0];
  const std::size_t slot_bytes = std::max(std::min(chunk_bytes, total), longest);
  const std::size_t slot_count = std::min(count, std::max<std::size_t>(1, chunk_bytes / 64));
  pipeline(device, count, slot_bytes, slot_count, true, digests, [&](ChunkSlot& slot, std::size_t first) {
    // As many messages as fit in the slot's data and digest buffers.
    std::size_t n = 0;
    while (first + n < count && n < slot_count && offsets[first + n + 1] - offsets[first] <= slot_bytes) ++n;
    const std::uint64_t base = offsets[first];
    const std::size_t bytes = offsets[first + n] - base;
    std::vector<std::uint64_t>& rebased = slot.host_offsets;
    rebased.resize(n + 1);
    for (std::size_t i = 0; i <= n; ++i) rebased[i] = offsets[first + i] - base;
    auto in = slot.data.view().subview(0, bytes);
    if (bytes != 0) in.copy_from(data.subspan(base, bytes), &slot.stream);
    auto offs = slot.offsets.view().subview(0, n + 1);
    offs.copy_from(std::span<const std::uint64_t>(rebased), &slot.stream);
    kernel.variable(algo, in, offs, slot.digests.view().subview(0, n * sha256_digest_bytes), &slot.stream);
    return n;
  });
}

void hash_host_fixed(HashAlgo algo, std::span<const std::uint8_t> data, std::size_t message_bytes,
                     std::span<std::uint8_t> digests, const HashOptions& options) {
  const std::size_t count = digest_count(digests.size());
  check_fixed(data.size(), message_bytes, count);
  if (count == 0) return;
  if (auto device = choose_device(options, count, data.size()))
    gpu_fixed(*device, algo, data, message_bytes, digests, count, options);
  else
    detail::cpu_hash_fixed(algo, data.data(), message_bytes, count, digests.data());
}

void hash_host_variable(HashAlgo algo, std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets,
                        std::span<std::uint8_t> digests, const HashOptions& options) {
  const std::size_t count = digest_count(digests.size());
  check_offsets(offsets, data.size(), count);
  if (count == 0) return;
  if (auto device = choose_device(options, count, data.size()))
    gpu_variable(*device, algo, data, offsets, digests, count, options);
  else
    detail::cpu_hash_variable(algo, data.data(), offsets.data(), count, digests.data());
}

// Device buffers: the buffers' device, which the options may name but not change. CPU-backend
// buffers are host memory, hashed in place by OpenSSL.
const Device& buffer_device(const Device& device, const HashOptions& options) {
  if (options.device && !(*options.device == device))
    throw Error(Errc::invalid_argument, "sha256", "the buffers live on another device than HashOptions::device");
  return device;
}

void hash_device_fixed(HashAlgo algo, BufferView<const std::uint8_t> data, std::size_t message_bytes,
                       BufferView<std::uint8_t> digests, const HashOptions& options) {
  const Device& device = buffer_device(data.device(), options);
  const std::size_t count = digest_count(digests.size());
  check_fixed(data.size(), message_bytes, count);
  if (!device.is_gpu() || options.host_cpu) {
    if (!device.is_gpu() && digests.device() == device) {
      detail::cpu_hash_fixed(algo, data.data(), message_bytes, count, digests.data());
      return;
    }
    throw Error(Errc::invalid_argument, "sha256", "host_cpu needs host data; these buffers live on a GPU");
  }
  Sha256Kernel(device).fixed(algo, data, message_bytes, digests, options.stream);
  if (options.stream == nullptr) device.default_stream().synchronize();
}

void hash_device_variable(HashAlgo algo, BufferView<const std::uint8_t> data, BufferView<const std::uint64_t> offsets,
                          BufferView<std::uint8_t> digests, const HashOptions& options) {
  const Device& device = buffer_device(data.device(), options);
  const std::size_t count = digest_count(digests.size());
  if (!device.is_gpu() || options.host_cpu) {
    if (!device.is_gpu() && digests.device() == device && offsets.device() == device) {
      check_offsets(std::span<const std::uint64_t>(offsets.data(), offsets.size()), data.size(), count);
      detail::cpu_hash_variable(algo, data.data(), offsets.data(), count, digests.data());
      return;
    }
    throw Error(Errc::invalid_argument, "sha256", "host_cpu needs host data; these buffers live on a GPU");
  }
  Sha256Kernel(device).variable(algo, data, offsets, digests, options.stream);
}

}  // namespace

void sha256(std::span<const std::uint8_t> data, std::size_t message_bytes, std::span<std::uint8_t> digests,
            const HashOptions& options) {
  hash_host_fixed(HashAlgo::sha256, data, message_bytes, digests, options);
}
void sha256d(std::span<const std::uint8_t> data, std::size_t message_bytes, std::span<std::uint8_t> digests,
             const HashOptions& options) {
  hash_host_fixed(HashAlgo::sha256d, data, message_bytes, digests, options);
}
void sha256(std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets, std::span<std::uint8_t> digests,
            const HashOptions& options) {
  hash_host_variable(HashAlgo::sha256, data, offsets, digests, options);
}
void sha256d(std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets,
             std::span<std::uint8_t> digests, const HashOptions& options) {
  hash_host_variable(HashAlgo::sha256d, data, offsets, digests, options);
}

void sha256(BufferView<const std::uint8_t> data, std::size_t message_bytes, BufferView<std::uint8_t> digests,
            const HashOptions& options) {
  hash_device_fixed(HashAlgo::sha256, data, message_bytes, digests, options);
}
void sha256d(BufferView<const std::uint8_t> data, std::size_t message_bytes, BufferView<std::uint8_t> digests,
             const HashOptions& options) {
  hash_device_fixed(HashAlgo::sha256d, data, message_bytes, digests, options);
}
void sha256(BufferView<const std::uint8_t> data, BufferView<const std::uint64_t> offsets,
            BufferView<std::uint8_t> digests, const HashOptions& options) {
  hash_device_variable(HashAlgo::sha256, data, offsets, digests, options);
}
void sha256d(BufferView<const std::uint8_t> data, BufferView<const std::uint64_t> offsets,
             BufferView<std::uint8_t> digests, const HashOptions& options) {
  hash_device_variable(HashAlgo::sha256d, data, offsets, digests, options);
}

Sha256Digest sha256(std::span<const std::uint8_t> message) {
  return Sha256Hasher().digest(message);
}
Sha256Digest sha256d(std::span<const std::uint8_t> message) {
  Sha256Hasher hasher;
  return hasher.digest(hasher.digest(message));
}

}  // namespace opkit::ops
