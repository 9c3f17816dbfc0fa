// SHA-256 and SHA-256d (SHA-256 of SHA-256, as Bitcoin uses it) over batches of messages, on a
// CUDA GPU (runtime-compiled kernels specialised on the message length) or on the host CPU
// (OpenSSL, SHA-NI where the CPU has it, parallel over all cores).
//
// Two batch layouts: fixed length (count messages of `message_bytes` each, back to back) and
// variable length (message i is data[offsets[i], offsets[i + 1]); offsets need not start at 0
// and may be unaligned). Digests are 32 bytes each, back to back, in message order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/kernel.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/sha256_hasher.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops {

// The digest type of every SHA-256 in opkit (opkit/sha256_hasher.hpp), by its operator's name.
using opkit::sha256_digest_bytes;
using opkit::Sha256Digest;

enum class HashAlgo : std::uint8_t {
  sha256,   // SHA-256(m)
  sha256d,  // SHA-256(SHA-256(m))
};
const char* hash_algo_name(HashAlgo algo) noexcept;

struct HashOptions {
  // Where host data is hashed. Unset: the first GPU that sha256_support() has, else the host CPU
  // (and the host for small batches, under 4096 messages and 1 MiB, which a GPU cannot win).
  // A device: the SHA-256 kernel on that device (Device::cpu(): the kernel source on the CPU
  // backend); Error(invalid_argument) when its backend has no SHA-256 kernel. Data already in
  // device buffers is hashed on the buffers' device, and `device`, if set, must be that device;
  // buffers of a backend without separate memory (the CPU backend) are hashed in place by OpenSSL.
  std::optional<Device> device = std::nullopt;
  // Hash on the host CPU through OpenSSL whatever `device` says (the "host" device of the CLI;
  // needs no CPU backend).
  bool host_cpu = false;
  // Device buffers: the work is queued on this stream (default: the device's default stream).
  // Fixed-length batches then return without waiting; variable-length batches wait, to report
  // bad offsets. Host data always returns with the digests written.
  const Stream* stream = nullptr;
  // Host data on a GPU goes through device memory in chunks of about this many bytes (0: up to
  // 256 MiB, at most 1/8 of the free memory). A single message larger than this gets its own.
  std::size_t chunk_bytes = 0;
};

// ---- Host memory in, host memory out. digests.size() must be 32 * count. ----

// count = data.size() / message_bytes messages (message_bytes 0: `count` empty messages, so the
// count is given by digests.size() / 32).
void sha256(std::span<const std::uint8_t> data, std::size_t message_bytes, std::span<std::uint8_t> digests,
            const HashOptions& options = {});
void sha256d(std::span<const std::uint8_t> data, std::size_t message_bytes, std::span<std::uint8_t> digests,
             const HashOptions& options = {});
// offsets.size() == count + 1, non-decreasing, offsets.back() <= data.size().
void sha256(std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets, std::span<std::uint8_t> digests,
            const HashOptions& options = {});
void sha256d(std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets,
             std::span<std::uint8_t> digests, const HashOptions& options = {});

// ---- Device buffers in, device buffer out (no host round trip), all on one device. ----

void sha256(BufferView<const std::uint8_t> data, std::size_t message_bytes, BufferView<std::uint8_t> digests,
            const HashOptions& options = {});
void sha256d(BufferView<const std::uint8_t> data, std::size_t message_bytes, BufferView<std::uint8_t> digests,
             const HashOptions& options = {});
void sha256(BufferView<const std::uint8_t> data, BufferView<const std::uint64_t> offsets,
            BufferView<std::uint8_t> digests, const HashOptions& options = {});
void sha256d(BufferView<const std::uint8_t> data, BufferView<const std::uint64_t> offsets,
             BufferView<std::uint8_t> digests, const HashOptions& options = {});

// ---- One message (host CPU, OpenSSL through Sha256Hasher). ----

Sha256Digest sha256(std::span<const std::uint8_t> message);
Sha256Digest sha256d(std::span<const std::uint8_t> message);

// The kernel programs as Sha256Kernel compiles them (for NVRTC tests, benchmarks, SASS dumps).
// load_align: the widest aligned load of messages allowed (16, 8, 4, 1); store_align: of digests
// (16, 4, 1); per_thread: messages per GPU thread.
Program sha256_fixed_program(HashAlgo algo, std::size_t message_bytes, unsigned load_align, unsigned store_align,
                             unsigned per_thread = 1);
Program sha256_variable_program(HashAlgo algo, unsigned store_align);

// Where the SHA-256 kernels run: every backend that compiles CUDA C++ (cuda, cpu, ...).
const KernelSupport& sha256_support();

// The SHA-256 kernels (src/ops/sha256/kernels/*.cu) compiled for one device of any backend that
// sha256_support() has. The functions above use it for host data on a device; with
// Device::cpu() it runs the kernel source itself on the CPU backend, which is how tests check
// that source on machines without a GPU. Each (algorithm, length, alignment) compiles once per
// device and is reused.
class Sha256Kernel {
 public:
  // Throws Error(invalid_argument) when the device's backend has no SHA-256 kernel.
  explicit Sha256Kernel(Device device);

  // Launch shape: threads per block and, for fixed-length batches, messages per thread.
  struct Tuning {
    unsigned block = 256;
    unsigned per_thread = 1;
  };
  void set_tuning(Tuning tuning);
  const Tuning& tuning() const noexcept { return tuning_; }

  // digests[32 i .. 32 i + 32) = H(data[i * message_bytes ..]) for count = digests.size() / 32
  // messages; data.size() must be count * message_bytes. Queued on `stream`; does not wait.
  void fixed(HashAlgo algo, BufferView<const std::uint8_t> data, std::size_t message_bytes,
             BufferView<std::uint8_t> digests, const Stream* stream = nullptr) const;
  // Variable-length batch; waits for the result (to check the offsets on the device).
  void variable(HashAlgo algo, BufferView<const std::uint8_t> data, BufferView<const std::uint64_t> offsets,
                BufferView<std::uint8_t> digests, const Stream* stream = nullptr) const;

  const Device& device() const noexcept { return device_; }

 private:
  Device device_;
  Tuning tuning_;
};

}  // namespace opkit::ops
