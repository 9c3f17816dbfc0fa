// The device-side counter check of chacha20 batches with device IVs (see chacha20_counters.hpp).
#include "chacha20_counters.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "cipher_kernels.hpp"
#include "device_secret.hpp"

namespace opkit::ops::detail {
namespace {

constexpr unsigned block_threads = 256;
constexpr std::uint64_t none_failed = std::numeric_limits<std::uint64_t>::max();

bool longest_fits_one_block(const BatchBounds& bounds) {
  if (bounds.fixed()) return bounds.fixed_bytes() <= 64;
  for (std::size_t i = 0; i < bounds.count(); ++i)
    if (bounds.size(i) > 64) return false;
  return true;
}

}  // namespace

void check_chacha20_counters_on_device(const Device& device, const CipherBatch& batch, const BatchBounds& bounds,
                                       const char* stage, const Stream* stream) {
  if (batch.count == 0 || longest_fits_one_block(bounds)) return;
  const BufferView<const std::uint8_t>& ivs = *batch.device_ivs;
  const DeviceBuffer<std::uint64_t> offsets = upload_scratch(device, bounds.offsets(), stream);
  DeviceBuffer<std::uint64_t> first_failing = call_scratch<std::uint64_t>(device, 1, stream);
  device.fill(first_failing.data(), 0xFFFFFFFFu, 4, 2, stream);  // none_failed
  const auto* offsets_at = bounds.fixed() ? nullptr : reinterpret_cast<const unsigned long long*>(offsets.data());
  cipher_kernel(device, {.source = CipherProgram::Source::batch_iv_check}, "chacha20_counter_check")
      .launch({.grid = static_cast<std::uint32_t>((batch.count + block_threads - 1) / block_threads),
               .block = block_threads,
               .stream = stream},
              ivs.data(), static_cast<unsigned long long>(batch.count),
              static_cast<unsigned long long>(bounds.fixed_bytes()), offsets_at,
              reinterpret_cast<unsigned long long*>(first_failing.data()));
  std::uint64_t first = none_failed;
  first_failing.view().copy_to(std::span<std::uint64_t>(&first, 1), stream);
  synchronize(device, stream);
  if (first == none_failed) return;
  std::array<std::uint8_t, 16> iv{};
  ivs.subview(first * 16, 16).copy_to(iv, stream);
  synchronize(device, stream);
  (void)check_message(Cipher::chacha20, cipher_traits(Cipher::chacha20).key_bytes, iv, 0, bounds.size(first), 0, stage);
  throw Error(Errc::runtime, stage, "the device counter check and check_message disagree");  // not reached
}

}  // namespace opkit::ops::detail
