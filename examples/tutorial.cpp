// The classic PyCUDA tutorial (SourceModule, mem_alloc, the test kernel, memcpy_dtoh, print),
// written with opkit's C++ API. It runs on the first CUDA GPU, or on the CPU backend without one.
#include <opkit/opkit.hpp>

#include <cstdio>

int main() try {
  auto device = opkit::Device::best();
  std::printf("device: %s (%s)\n", device.info().name.c_str(), device.info().arch.c_str());

  // mod = SourceModule("""__global__ void test_kernel(float *a) {...}""")
  auto module = device.compile(opkit::Program(R"(
    __global__ void test_kernel(float *a) {
      int idx = threadIdx.x + threadIdx.y * 4;
      a[idx] = 2.0 * idx;
    }
  )")
                                   .name("tutorial.cu"));

  // a_gpu = cuda.mem_alloc(a.nbytes)
  auto a = device.alloc<float>(256);

  // func = mod.get_function("test_kernel"); func(a_gpu, block=(256, 1, 1))
  module.kernel("test_kernel").launch({.grid = 1, .block = 256}, a);

  // cuda.memcpy_dtoh(a_doubled, a_gpu); print(a_doubled)
  std::vector<float> doubled = a.to_host();
  for (std::size_t i = 0; i < doubled.size(); ++i) std::printf("%g%c", doubled[i], i % 16 == 15 ? '\n' : ' ');

  for (std::size_t i = 0; i < doubled.size(); ++i)
    if (doubled[i] != 2.0f * static_cast<float>(i)) {
      std::fprintf(stderr, "wrong value at %zu: %g\n", i, doubled[i]);
      return 1;
    }
  return 0;
} catch (const opkit::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return e.kind() == opkit::Errc::unavailable ? 77 : 1;
}
