// The core toolkit on a real GPU: memory, copies, typed launches, streams, events and the errors
// a user meets. Skips without a GPU.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "gpu_test.hpp"
#include "opkit/opkit.hpp"

namespace {

constexpr const char* kTutorial = R"(
__global__ void test_kernel(float *a) {
  int idx = threadIdx.x + threadIdx.y * 4;
  a[idx] = 2.0 * idx;
}
)";

TEST(CoreGpu, TutorialKernelDoublesIndices) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto module = gpu.compile(opkit::Program(kTutorial).name("tutorial.cu"));
  auto a = gpu.alloc<float>(256);
  a.fill(-1.0f);
  module.kernel("test_kernel").launch({.grid = 1, .block = 256}, a);
  auto host = a.to_host();
  for (int i = 0; i < 256; ++i) ASSERT_EQ(host[static_cast<std::size_t>(i)], 2.0f * static_cast<float>(i)) << i;
  EXPECT_EQ(host.back(), 510.0f);
}

TEST(CoreGpu, CopiesRoundTripRandomDataHostDeviceDevice) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(std::random_device{}());
  std::vector<std::uint64_t> data(1 << 20);
  for (auto& v : data) v = rng();
  auto a = gpu.alloc<std::uint64_t>(data.size());
  auto b = gpu.alloc<std::uint64_t>(data.size());
  a.copy_from(data);
  b.copy_from(a.view());
  EXPECT_EQ(b.to_host(), data);
  // Sub-views address the right elements.
  auto tail = b.view().subview(data.size() - 10, 10).to_host();
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), data.end() - 10));
  EXPECT_THROW(b.view().subview(data.size() - 1, 2), opkit::Error);
}

TEST(CoreGpu, TypedLaunchPassesScalarsStructsAnd3DGeometry) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto module = gpu.compile(opkit::Program(R"(
    struct Affine { float scale; int offset; };
    extern "C" __global__ void fill3d(unsigned* out, Affine f, unsigned long long base) {
      unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
      unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
      unsigned z = blockIdx.z * blockDim.z + threadIdx.z;
      unsigned w = gridDim.x * blockDim.x, h = gridDim.y * blockDim.y;
      unsigned i = (z * h + y) * w + x;
      out[i] = (unsigned)(base + i * f.scale) + f.offset;
    })"));
  struct Affine {
    float scale;
    int offset;
  };
  const opkit::Dim3 grid{2, 3, 4}, block{8, 4, 2};
  const std::size_t n = grid.count() * block.count();
  auto out = gpu.alloc<unsigned>(n);
  module.kernel("fill3d").launch({.grid = grid, .block = block}, out, Affine{2.0f, 7}, 1000ull);
  auto host = out.to_host();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], 1000u + 2u * static_cast<unsigned>(i) + 7u) << i;
}

TEST(CoreGpu, StreamsEventsAndDynamicSharedMemory) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto module = gpu.compile(opkit::Program(R"(
    extern "C" __global__ void reverse(const int* in, int* out, int n) {
      extern __shared__ int tile[];
      int t = threadIdx.x;
      if (t < n) tile[t] = in[t];
      __syncthreads();
      if (t < n) out[t] = tile[n - 1 - t];
    })"));
  auto stream = gpu.create_stream();
  auto start = gpu.create_event(), stop = gpu.create_event();
  std::vector<int> data(1024);
  std::iota(data.begin(), data.end(), std::random_device{}() % 1000);
  auto in = gpu.alloc<int>(data.size()), out = gpu.alloc<int>(data.size());
  in.copy_from(data, &stream);
  start.record(stream);
  module.kernel("reverse").launch({.grid = 1, .block = 1024, .shared_bytes = 1024 * sizeof(int), .stream = &stream}, in,
                                  out, 1024);
  stop.record(stream);
  std::vector<int> host(data.size());
  out.copy_to(host, &stream);
  stream.synchronize();
  EXPECT_TRUE(std::equal(host.begin(), host.end(), data.rbegin()));
  EXPECT_GE(opkit::Event::elapsed_ms(start, stop), 0.0f);
}

TEST(CoreGpu, BorrowedViewOverForeignMemoryWorksLikeABuffer) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto owner = gpu.alloc<std::uint32_t>(64);
  opkit::BufferView<std::uint32_t> view(gpu, owner.data(), owner.size());
  view.fill(0xdeadbeefu);
  for (auto v : owner.to_host()) ASSERT_EQ(v, 0xdeadbeefu);
}

TEST(CoreGpu, UnknownKernelNameIsAnErrorListingTheKernels) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto module = gpu.compile(opkit::Program(kTutorial));
  try {
    module.kernel("no_such_kernel");
    FAIL();
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::not_found);
    EXPECT_NE(e.message().find("no_such_kernel"), std::string::npos);
    EXPECT_NE(e.message().find("test_kernel"), std::string::npos);
  }
}

TEST(CoreGpu, WrongArgumentCountOrSizeIsRejectedBeforeLaunch) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto kernel = gpu.compile(opkit::Program(kTutorial)).kernel("test_kernel");
  auto a = gpu.alloc<float>(256);
  // cuFuncGetParamInfo exists on CUDA >= 12.4 drivers; with it, mismatches are caught.
  EXPECT_THROW(kernel.launch({.grid = 1, .block = 256}, a, 5), opkit::Error);
  EXPECT_THROW(kernel.launch({.grid = 1, .block = 256}, 5), opkit::Error);
}

TEST(CoreGpu, IllegalAddressInsideAKernelBecomesAnErrorNamingTheKernel) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto kernel = gpu.compile(opkit::Program(R"(
    __global__ void scribble(int* p) { p[threadIdx.x] = 1; })"))
                    .kernel("scribble");
  kernel.launch({.grid = 1, .block = 32}, reinterpret_cast<int*>(0x10));
  try {
    gpu.synchronize();
    FAIL() << "the fault was not reported";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::launch);
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_NE(e.kernel().find("scribble"), std::string::npos) << e.what();
  }
}

TEST(CoreGpu, OutOfMemoryIsAClearError) {
  OPKIT_SKIP_WITHOUT_GPU();
  try {
    auto huge = gpu.alloc<std::uint8_t>(std::size_t{1} << 50);
    FAIL();
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::memory);
    EXPECT_NE(e.message().find("out of device memory"), std::string::npos);
  }
}

TEST(CoreGpu, SameProgramTwiceCompilesOnceInProcess) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto a = gpu.compile(opkit::Program(kTutorial).define("UNIQUE_TO_THIS_TEST", 1));
  auto b = gpu.compile(opkit::Program(kTutorial).define("UNIQUE_TO_THIS_TEST", 1));
  EXPECT_EQ(&a.program(), &b.program());
}

}  // namespace
