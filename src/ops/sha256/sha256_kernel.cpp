// Sha256Kernel: the embedded SHA-256 kernel sources compiled for a device (specialised with -D
// on algorithm, message length and alignment) and launched over a batch. Its kernel set serves
// every backend that compiles CUDA C++, and compiles each specialisation once per device.
#include <algorithm>
#include <mutex>
#include <string>

#include "opkit/error.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/module.hpp"
#include "opkit/ops/sha256.hpp"
#include "opkit_embedded.hpp"

namespace opkit::ops {
namespace {

std::string embedded(const char* name) {
  std::string_view text = opkit::detail::embedded_source(name);
  if (text.empty()) throw Error(Errc::not_found, "sha256", std::string("kernel source ") + name + " is not embedded");
  return std::string(text);
}

// A kernel source with its headers, as NVRTC and the CPU backend both take them.
Program kernel_program(const std::string& file) {
  return Program(embedded(("sha256/" + file).c_str()))
      .name(file)
      .header("sha256_primitives.cuh", embedded("sha256/sha256_primitives.cuh"))
      .header("sha256_core.cuh", embedded("sha256/sha256_core.cuh"))
      .header("sha256_io.cuh", embedded("sha256/sha256_io.cuh"));
}

// The largest power of two up to `cap` dividing every value (0 divides by anything).
unsigned alignment_of(std::initializer_list<std::uint64_t> values, unsigned cap) {
  unsigned align = cap;
  for (std::uint64_t v : values)
    while (align > 1 && v % align != 0) align /= 2;
  return align;
}

unsigned store_alignment(const void* digests) {
  unsigned align = alignment_of({reinterpret_cast<std::uintptr_t>(digests)}, 16);
  return align >= 16 ? 16 : (align >= 4 ? 4 : 1);
}

// Messages per launch: keeps the grid within CUDA's 2^31 - 1 blocks with room to spare.
constexpr std::uint64_t max_launch_messages = std::uint64_t{1} << 30;

void check_device(const Device& expected, const Device& actual, const char* what) {
  if (!(expected == actual))
    throw Error(Errc::invalid_argument, "Sha256Kernel",
                std::string(what) + " lives on " + actual.backend() + " device " +
                    std::to_string(actual.info().ordinal) + ", not on the kernel's " + expected.backend() + " device " +
                    std::to_string(expected.info().ordinal));
}

// One specialisation of either kernel: the key of the per-device kernel cache.
struct Sha256Params {
  bool variable = false;
  HashAlgo algo = HashAlgo::sha256;
  std::size_t message_bytes = 0;  // fixed-length kernel only
  unsigned load_align = 1, store_align = 1, per_thread = 1;
  auto operator<=>(const Sha256Params&) const = default;
};

const KernelSet<Sha256Params>& kernels() {
  // Never destroyed: its kernels keep modules loaded, which must not be unloaded during exit.
  static const auto* set = [] {
    auto* s = new KernelSet<Sha256Params>("sha256");
    s->add_language("cuda", {[](const Sha256Params& p) {
                               return p.variable ? sha256_variable_program(p.algo, p.store_align)
                                                 : sha256_fixed_program(p.algo, p.message_bytes, p.load_align,
                                                                        p.store_align, p.per_thread);
                             },
                             {.block = 256}});
    return s;
  }();
  return *set;
}

void check_digests(std::size_t digest_bytes) {
  if (digest_bytes % sha256_digest_bytes != 0)
    throw Error(Errc::invalid_argument, "sha256",
                "digest buffer of " + std::to_string(digest_bytes) + " bytes is not a multiple of 32");
}

}  // namespace

Program sha256_fixed_program(HashAlgo algo, std::size_t message_bytes, unsigned load_align, unsigned store_align,
                             unsigned per_thread) {
  Program program = kernel_program("sha256_fixed.cu");
  program.define("MSG_LEN", static_cast<unsigned long long>(message_bytes))
      .define("DOUBLE_HASH", algo == HashAlgo::sha256d ? 1 : 0)
      .define("LOAD_ALIGN", static_cast<int>(load_align))
      .define("STORE_ALIGN", static_cast<int>(store_align))
      .define("PER_THREAD", static_cast<int>(per_thread));
  return program;
}

Program sha256_variable_program(HashAlgo algo, unsigned store_align) {
  Program program = kernel_program("sha256_var.cu");
  program.define("DOUBLE_HASH", algo == HashAlgo::sha256d ? 1 : 0).define("STORE_ALIGN", static_cast<int>(store_align));
  return program;
}

const char* hash_algo_name(HashAlgo algo) noexcept {
  return algo == HashAlgo::sha256d ? "sha256d" : "sha256";
}

const KernelSupport& sha256_support() {
  return kernels();
}

Sha256Kernel::Sha256Kernel(Device device) : device_(std::move(device)) {
  tuning_.block = kernels().on(device_).shape.block;  // Error naming the backend when it has no kernel
}

void Sha256Kernel::set_tuning(Tuning tuning) {
  if (tuning.block == 0 || tuning.block > 1024 || tuning.per_thread == 0 || tuning.per_thread > 8)
    throw Error(Errc::invalid_argument, "Sha256Kernel::set_tuning",
                "block must be 1..1024 and per_thread 1..8, got " + std::to_string(tuning.block) + " and " +
                    std::to_string(tuning.per_thread));
  tuning_ = tuning;
}

void Sha256Kernel::fixed(HashAlgo algo, BufferView<const std::uint8_t> data, std::size_t message_bytes,
                         BufferView<std::uint8_t> digests, const Stream* stream) const {
  check_device(device_, data.device(), "the data");
  check_device(device_, digests.device(), "the digest buffer");
  check_digests(digests.size());
  const std::uint64_t count = digests.size() / sha256_digest_bytes;
  if (message_bytes != 0 && count > data.size() / message_bytes)
    throw Error(Errc::invalid_argument, "sha256",
                std::to_string(count) + " digests need " + std::to_string(count) + " x " +
                    std::to_string(message_bytes) + " bytes of data, the data holds " + std::to_string(data.size()));
  if (count == 0) return;
  const unsigned load_align = alignment_of({reinterpret_cast<std::uintptr_t>(data.data()), message_bytes}, 16);
  const Sha256Params params{.algo = algo,
                            .message_bytes = message_bytes,
                            .load_align = load_align,
                            .store_align = store_alignment(digests.data()),
                            .per_thread = tuning_.per_thread};
  const Kernel kernel = kernels().kernel(device_, params, "sha256_fixed");
  const std::uint64_t per_block = std::uint64_t{tuning_.block} * tuning_.per_thread;
  for (std::uint64_t first = 0; first < count; first += max_launch_messages) {
    const std::uint64_t n = std::min(count - first, max_launch_messages);
    const auto grid = static_cast<std::uint32_t>((n + per_block - 1) / per_block);
    const std::uint8_t* in = data.data() + first * message_bytes;
    std::uint8_t* out = digests.data() + first * sha256_digest_bytes;
    kernel.launch({.grid = grid, .block = tuning_.block, .stream = stream}, in, out,
                  static_cast<unsigned long long>(n));
  }
}

void Sha256Kernel::variable(HashAlgo algo, BufferView<const std::uint8_t> data, BufferView<const std::uint64_t> offsets,
                            BufferView<std::uint8_t> digests, const Stream* stream) const {
  check_device(device_, data.device(), "the data");
  check_device(device_, offsets.device(), "the offsets");
  check_device(device_, digests.device(), "the digest buffer");
  check_digests(digests.size());
  const std::uint64_t count = digests.size() / sha256_digest_bytes;
  if (offsets.size() != count + 1)
    throw Error(Errc::invalid_argument, "sha256",
                std::to_string(count) + " digests need " + std::to_string(count + 1) + " offsets, got " +
                    std::to_string(offsets.size()));
  if (count == 0) return;
  const Sha256Params params{.variable = true, .algo = algo, .store_align = store_alignment(digests.data())};
  const Kernel kernel = kernels().kernel(device_, params, "sha256_var");

  const std::uint64_t none = ~std::uint64_t{0};
  DeviceBuffer<std::uint64_t> bad = device_.alloc<std::uint64_t>(1);
  bad.copy_from(std::span<const std::uint64_t>(&none, 1), stream);
  for (std::uint64_t first = 0; first < count; first += max_launch_messages) {
    const std::uint64_t n = std::min(count - first, max_launch_messages);
    const auto grid = static_cast<std::uint32_t>((n + tuning_.block - 1) / tuning_.block);
    kernel.launch({.grid = grid, .block = tuning_.block, .stream = stream}, data.data(),
                  static_cast<unsigned long long>(data.size()), offsets.data() + first,
                  static_cast<unsigned long long>(n), digests.data() + first * sha256_digest_bytes,
                  static_cast<unsigned long long>(first), bad.data());
  }
  std::uint64_t bad_index = none;
  bad.copy_to(std::span<std::uint64_t>(&bad_index, 1), stream);
  if (stream != nullptr) stream->synchronize();
  if (bad_index != none) {
    throw Error(Errc::invalid_argument, "sha256",
                "offsets of message " + std::to_string(bad_index) + " run backwards or past the end of the data (" +
                    std::to_string(data.size()) + " bytes)");
  }
}

}  // namespace opkit::ops
