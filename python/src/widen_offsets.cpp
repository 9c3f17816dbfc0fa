#include "widen_offsets.hpp"

#include "opkit/module.hpp"
#include "opkit/program.hpp"

namespace opkit::python {
namespace {

// Compiled once per device through opkit itself (NVRTC and its kernel cache).
constexpr const char* widen_source = R"(
extern "C" __global__ void opkit_widen_offsets(const unsigned int* in, unsigned long long* out,
                                               unsigned long long count, int is_signed) {
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count)
    out[i] = is_signed ? static_cast<unsigned long long>(static_cast<long long>(static_cast<int>(in[i]))) : in[i];
}
)";

}  // namespace

DeviceBuffer<std::uint64_t> widen_offsets(const Device& gpu, BufferView<const std::uint32_t> offsets, bool is_signed,
                                          const Stream* stream) {
  DeviceBuffer<std::uint64_t> wide = gpu.alloc<std::uint64_t>(offsets.size());
  if (offsets.size() == 0) return wide;
  Kernel kernel = gpu.compile(Program(widen_source).name("widen_offsets.cu")).kernel("opkit_widen_offsets");
  constexpr std::uint32_t block = 256;
  const auto grid = static_cast<std::uint32_t>((offsets.size() + block - 1) / block);
  kernel.launch({.grid = grid, .block = block, .stream = stream}, offsets, wide.view(),
                static_cast<unsigned long long>(offsets.size()), is_signed ? 1 : 0);
  return wide;
}

}  // namespace opkit::python
