// The batch AES-CTR IO switch, the slice size and the bulk GHASH engine (aes_batch_io.hpp).
#include "aes_batch_io.hpp"

#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>

namespace opkit::ops::aes {
namespace {

std::atomic<BatchIo>& choice() {
  static std::atomic<BatchIo> io = [] {
    const char* env = std::getenv("OPKIT_AES_BATCH_IO");
    return env != nullptr && std::string_view(env) == "direct" ? BatchIo::direct : BatchIo::staged;
  }();
  return io;
}

std::atomic<GhashEngine>& engine_choice() {
  static std::atomic<GhashEngine> engine = [] {
    const char* env = std::getenv("OPKIT_AES_GHASH");
    return env != nullptr && std::string_view(env) == "horner" ? GhashEngine::horner : GhashEngine::tensor_cores;
  }();
  return engine;
}

// 2^18 messages: ~4 waves of the GHASH kernel (one thread a message) and ~8 of the setup kernel,
// launches that fill the GPU; 82 MB of scratch state a slice (312 bytes a message).
constexpr std::size_t default_slice_messages = std::size_t{1} << 18;
std::atomic<std::size_t> slice_messages{default_slice_messages};

// The number of a CUDA arch name ("sm_90" -> 90), 0 if it is none.
int sm_number(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return 0;
  int n = 0;
  for (std::size_t i = 3; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i) n = 10 * n + (arch[i] - '0');
  return n;
}

}  // namespace

BatchIo batch_io() noexcept {
  return choice().load(std::memory_order_relaxed);
}

void set_batch_io(BatchIo io) noexcept {
  choice().store(io, std::memory_order_relaxed);
}

std::size_t batch_slice_messages() noexcept {
  return slice_messages.load(std::memory_order_relaxed);
}

void set_batch_slice_messages(std::size_t messages) noexcept {
  slice_messages.store(messages == 0 ? default_slice_messages : messages, std::memory_order_relaxed);
}

bool staged_batch_io(const Device& device) {
  if (batch_io() != BatchIo::staged) return false;
  const DeviceInfo& info = device.info();
  return info.backend != "cuda" || sm_number(info.arch) >= 80;
}

GhashEngine ghash_engine() noexcept {
  return engine_choice().load(std::memory_order_relaxed);
}

void set_ghash_engine(GhashEngine engine) noexcept {
  engine_choice().store(engine, std::memory_order_relaxed);
}

bool tensor_core_ghash(const Device& device) {
  const DeviceInfo& info = device.info();
  return ghash_engine() == GhashEngine::tensor_cores && info.backend == "cuda" && sm_number(info.arch) >= 80;
}

}  // namespace opkit::ops::aes
