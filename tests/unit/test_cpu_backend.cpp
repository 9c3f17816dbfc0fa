// The CPU backend's own machinery, beside the CUDA semantics it shares with every device
// (tests/conformance/test_kernel_semantics.cpp): its kernel discovery after preprocessing
// (namespaces, extern "C" blocks), host memory and stream handles, and the facts it reports.
#include <gtest/gtest.h>

#include <sys/utsname.h>

#include "opkit/opkit.hpp"

namespace {

opkit::Device cpu() {
  return opkit::Device::cpu();
}

TEST(CpuBackend, KernelsAreFoundAfterPreprocessingAndQualifiedByNamespace) {
  const char* source = R"cuda(
#include "config.cuh"
#if USE_FAST
__global__ void fast_path(int* out) { out[0] = FAST_VALUE; }
#else
__global__ void slow_path(int* out) { out[0] = -1; }
#endif
namespace outer { namespace inner {
__global__ void nested(int* out) { out[0] = 7; }
} }
extern "C" { __global__ void in_c_block(int* out) { out[0] = 8; } }
namespace { __global__ void anonymous(int* out) { out[0] = 9; } }
)cuda";
  auto module = cpu().compile(opkit::Program(source)
                                  .name("preprocessed.cu")
                                  .header("config.cuh", "#define FAST_VALUE (40 + 2)\n")
                                  .define("USE_FAST", 1));
  auto out = cpu().alloc<int>(1);
  module.kernel("fast_path").launch({.grid = 1, .block = 1}, out);
  EXPECT_EQ(out.to_host()[0], 42);
  EXPECT_THROW(module.kernel("slow_path"), opkit::Error);
  EXPECT_EQ(module.program().format, opkit::BinaryFormat::host_dso);
  const std::pair<const char*, int> qualified[] = {{"outer::inner::nested", 7}, {"in_c_block", 8}, {"anonymous", 9}};
  for (const auto& [name, value] : qualified) {
    module.kernel(name).launch({.grid = 1, .block = 1}, out);
    EXPECT_EQ(out.to_host()[0], value) << name;
  }
}

TEST(CpuBackend, ZeroByteAllocationsAreRealPointers) {
  opkit::Device dev = cpu();
  void* empty = dev.allocate(0);
  EXPECT_NE(empty, nullptr);
  dev.deallocate(empty);
}

TEST(CpuBackend, CreatedStreamsHaveHandlesAndTheDefaultStreamIsNull) {
  opkit::Device dev = cpu();
  opkit::Stream stream = dev.create_stream();
  EXPECT_NE(stream.native_handle(), nullptr);
  EXPECT_EQ(dev.default_stream().native_handle(), nullptr);
}

TEST(CpuBackend, DeviceDescribesTheHost) {
  const opkit::DeviceInfo& info = cpu().info();
  utsname machine{};
  ASSERT_EQ(uname(&machine), 0);
  EXPECT_EQ(info.backend, "cpu");
  EXPECT_EQ(cpu().id(), "cpu:0");
  EXPECT_FALSE(cpu().is_gpu());
  EXPECT_EQ(info.arch, machine.machine);
  EXPECT_GE(info.compute_units, 1);
  EXPECT_GT(info.total_memory, 0u);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(cpu().free_memory(), 0u);
}

}  // namespace
