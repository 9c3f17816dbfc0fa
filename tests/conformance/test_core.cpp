// The core toolkit on every device: memory, copies, typed launches, streams, events and the
// errors a user meets before a launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "conformance/devices.hpp"
#include "opkit/opkit.hpp"

namespace {

OPKIT_CONFORMANCE_DEVICE_SUITE(Core);

constexpr const char* kTutorial = R"(
__global__ void test_kernel(float *a) {
  int idx = threadIdx.x + threadIdx.y * 4;
  a[idx] = 2.0 * idx;
}
)";

TEST_P(Core, TutorialKernelDoublesIndices) {
  const opkit::Device& device = *target().device;
  auto module = device.compile(opkit::Program(kTutorial).name("tutorial.cu"));
  auto a = device.alloc<float>(256);
  a.fill(-1.0f);
  module.kernel("test_kernel").launch({.grid = 1, .block = 256}, a);
  auto host = a.to_host();
  for (int i = 0; i < 256; ++i) ASSERT_EQ(host[static_cast<std::size_t>(i)], 2.0f * static_cast<float>(i)) << i;
  EXPECT_EQ(host.back(), 510.0f);
}

TEST_P(Core, CopiesRoundTripRandomDataHostDeviceDevice) {
  const opkit::Device& device = *target().device;
  std::mt19937_64 rng(std::random_device{}());
  std::vector<std::uint64_t> data(1 << 20);
  for (auto& v : data) v = rng();
  auto a = device.alloc<std::uint64_t>(data.size());
  auto b = device.alloc<std::uint64_t>(data.size());
  a.copy_from(data);
  b.copy_from(a.view());
  EXPECT_EQ(b.to_host(), data);
  // Sub-views address the right elements.
  auto tail = b.view().subview(data.size() - 10, 10).to_host();
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), data.end() - 10));
  EXPECT_THROW(b.view().subview(data.size() - 1, 2), opkit::Error);
}

// Pinned host memory: asynchronous copies on a stream from it and back into it (by DMA on a GPU),
// seen once the stream is waited for; a move leaves the source empty.
TEST_P(Core, PinnedBuffersCopyToTheDeviceAndBackOnAStream) {
  const opkit::Device& device = *target().device;
  std::mt19937_64 rng(std::random_device{}());
  opkit::PinnedBuffer<std::uint64_t> pinned(device, 1 << 18);
  ASSERT_NE(pinned.data(), nullptr);
  for (auto& v : pinned.span()) v = rng();
  const std::vector<std::uint64_t> expected(pinned.span().begin(), pinned.span().end());
  opkit::Stream stream = device.create_stream();
  auto a = device.alloc<std::uint64_t>(pinned.size());
  a.copy_from(std::as_const(pinned).span(), &stream);
  opkit::PinnedBuffer<std::uint64_t> back(device, pinned.size());
  a.copy_to(back.span(), &stream);
  stream.synchronize();
  EXPECT_TRUE(std::equal(back.span().begin(), back.span().end(), expected.begin()));
  opkit::PinnedBuffer<std::uint64_t> moved = std::move(back);
  EXPECT_EQ(back.data(), nullptr);  // NOLINT(bugprone-use-after-move): what a move leaves is the point
  EXPECT_EQ(moved.size(), expected.size());
  EXPECT_EQ(opkit::PinnedBuffer<std::uint8_t>(device, 0).data(), nullptr);
}

TEST_P(Core, TypedLaunchPassesScalarsStructsAnd3DGeometry) {
  const opkit::Device& device = *target().device;
  auto module = device.compile(opkit::Program(R"(
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
  auto out = device.alloc<unsigned>(n);
  module.kernel("fill3d").launch({.grid = grid, .block = block}, out, Affine{2.0f, 7}, 1000ull);
  auto host = out.to_host();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(host[i], 1000u + 2u * static_cast<unsigned>(i) + 7u) << i;
}

TEST_P(Core, StreamsEventsAndDynamicSharedMemory) {
  const opkit::Device& device = *target().device;
  auto module = device.compile(opkit::Program(R"(
    extern "C" __global__ void reverse(const int* in, int* out, int n) {
      extern __shared__ int tile[];
      int t = threadIdx.x;
      if (t < n) tile[t] = in[t];
      __syncthreads();
      if (t < n) out[t] = tile[n - 1 - t];
    })"));
  auto stream = device.create_stream();
  auto start = device.create_event(), stop = device.create_event();
  std::vector<int> data(1024);
  std::iota(data.begin(), data.end(), std::random_device{}() % 1000);
  auto in = device.alloc<int>(data.size()), out = device.alloc<int>(data.size());
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

// Stream-ordered buffers: allocated, written, read and freed on one stream with no wait between
// rounds. Each round's buffer may reuse memory an earlier round freed while its kernel was still
// queued, so a free that ran ahead of its stream would show up as another round's numbers.
TEST_P(Core, StreamOrderedBuffersCarryEachRoundsDataWithoutWaits) {
  const opkit::Device& device = *target().device;
  auto module = device.compile(opkit::Program(R"(
    extern "C" __global__ void stamp(unsigned* out, unsigned n, unsigned round) {
      unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = round * 1000003u + i;
    })"));
  auto stream = device.create_stream();
  const unsigned n = 1u << 16;
  const unsigned rounds = 24;
  auto collected = device.alloc<unsigned>(std::size_t{n} * rounds);
  for (unsigned round = 0; round < rounds; ++round) {
    auto scratch = device.alloc<unsigned>(n, stream);
    auto relay = device.alloc<unsigned>(n, stream);
    module.kernel("stamp").launch({.grid = n / 256, .block = 256, .stream = &stream}, scratch, n, round);
    relay.copy_from(std::as_const(scratch).view(), &stream);
    collected.view().subview(std::size_t{round} * n, n).copy_from(std::as_const(relay).view(), &stream);
  }  // both freed on the stream, behind the copies that read them
  stream.synchronize();
  const std::vector<unsigned> host = collected.to_host();
  for (unsigned round = 0; round < rounds; ++round)
    for (unsigned i = 0; i < n; ++i)
      ASSERT_EQ(host[std::size_t{round} * n + i], round * 1000003u + i) << "round " << round << " element " << i;
  // A stream orders memory of its own device only.
  for (const opkit::Device& other : opkit::Device::all())
    if (!(other == device)) {
      auto foreign = other.create_stream();
      EXPECT_THROW((void)device.alloc<unsigned>(4, foreign), opkit::Error) << other.id();
    }
}

// A chain of steps alternating between two streams, each ordered after the one before by an
// event the next stream waits for (no host wait): the result is right only if every wait held.
TEST_P(Core, StreamsWaitForEventsOfOtherStreams) {
  const opkit::Device& device = *target().device;
  auto module = device.compile(opkit::Program(R"(
    extern "C" __global__ void step(const unsigned* in, unsigned* out, unsigned n, unsigned k) {
      unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = in[i] * 3u + k;
    })"));
  const unsigned n = 1u << 18;
  opkit::Stream streams[] = {device.create_stream(), device.create_stream()};
  auto a = device.alloc<unsigned>(n), b = device.alloc<unsigned>(n);
  std::vector<unsigned> expected(n);
  std::iota(expected.begin(), expected.end(), std::random_device{}() % 1000);
  a.copy_from(expected);
  device.synchronize();  // the streams below do not wait for the default stream
  opkit::DeviceBuffer<unsigned>* buffers[] = {&a, &b};
  for (unsigned k = 0; k < 12; ++k) {
    const opkit::Stream& stream = streams[k % 2];
    module.kernel("step").launch({.grid = n / 256, .block = 256, .stream = &stream},
                                 std::as_const(*buffers[k % 2]).view(), buffers[1 - k % 2]->view(), n, k);
    for (auto& v : expected) v = v * 3u + k;
    opkit::Event done = device.create_event();
    done.record(stream);
    streams[1 - k % 2].wait(done);
  }
  streams[0].synchronize();
  EXPECT_EQ(a.to_host(), expected);
  EXPECT_TRUE(streams[0].query());
  EXPECT_TRUE(streams[1].query());
  opkit::Event never_recorded = device.create_event();
  EXPECT_TRUE(never_recorded.query());
  for (const opkit::Device& other : opkit::Device::all()) {
    if (other == device) continue;
    EXPECT_THROW(other.create_stream().wait(never_recorded), opkit::Error) << other.id();
  }
}

// __device__ and __constant__ variables by symbol: written from the host, read by a kernel, and
// updated by a kernel for the host to read back.
TEST_P(Core, ModuleVariablesAreFoundBySymbolAndCopiedToAndFrom) {
  const opkit::Device& device = *target().device;
  auto module = device.compile(opkit::Program(R"(
    __constant__ int table[8];
    __device__ unsigned long long total;
    extern "C" __global__ void look_up(int* out, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) { out[i] = table[i % 8]; atomicAdd(&total, (unsigned long long)table[i % 8]); }
    })"));
  const opkit::GlobalVariable table = module.global("table");
  const opkit::GlobalVariable total = module.global("total");
  ASSERT_EQ(table.bytes, 8 * sizeof(int));
  ASSERT_EQ(total.bytes, sizeof(unsigned long long));
  std::mt19937 rng(std::random_device{}());
  std::vector<int> values(8);
  for (int& v : values) v = static_cast<int>(rng() % 100000);
  const unsigned long long zero = 0;
  device.copy(table.address, values.data(), table.bytes, opkit::CopyKind::host_to_device);
  device.copy(total.address, &zero, total.bytes, opkit::CopyKind::host_to_device);
  const int n = 1000;
  auto out = device.alloc<int>(n);
  module.kernel("look_up").launch({.grid = 4, .block = 256}, out, n);
  const std::vector<int> host = out.to_host();
  unsigned long long sum = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(host[static_cast<std::size_t>(i)], values[static_cast<std::size_t>(i % 8)]) << i;
    sum += static_cast<unsigned long long>(values[static_cast<std::size_t>(i % 8)]);
  }
  unsigned long long read_back = 0;
  device.copy(&read_back, total.address, sizeof read_back, opkit::CopyKind::device_to_host);
  EXPECT_EQ(read_back, sum);
  try {
    (void)module.global("no_such_variable");
    ADD_FAILURE() << "expected Errc::not_found";
  } catch (const opkit::Error& error) {
    EXPECT_EQ(error.kind(), opkit::Errc::not_found);
    EXPECT_NE(std::string(error.what()).find("no_such_variable"), std::string::npos) << error.what();
  }
}

TEST_P(Core, BorrowedViewOverForeignMemoryWorksLikeABuffer) {
  const opkit::Device& device = *target().device;
  auto owner = device.alloc<std::uint32_t>(64);
  opkit::BufferView<std::uint32_t> view(device, owner.data(), owner.size());
  view.fill(0xdeadbeefu);
  for (auto v : owner.to_host()) ASSERT_EQ(v, 0xdeadbeefu);
}

TEST_P(Core, UnknownKernelNameIsAnErrorListingTheKernels) {
  const opkit::Device& device = *target().device;
  auto module = device.compile(opkit::Program(kTutorial));
  try {
    module.kernel("no_such_kernel");
    FAIL();
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::not_found);
    EXPECT_NE(e.message().find("no_such_kernel"), std::string::npos);
    EXPECT_NE(e.message().find("test_kernel"), std::string::npos);
  }
}

TEST_P(Core, WrongArgumentCountOrSizeIsRejectedBeforeLaunch) {
  const opkit::Device& device = *target().device;
  auto kernel = device.compile(opkit::Program(kTutorial)).kernel("test_kernel");
  auto a = device.alloc<float>(256);
  // cuFuncGetParamInfo exists on CUDA >= 12.4 drivers; with it, mismatches are caught.
  EXPECT_THROW(kernel.launch({.grid = 1, .block = 256}, a, 5), opkit::Error);
  EXPECT_THROW(kernel.launch({.grid = 1, .block = 256}, 5), opkit::Error);
}

TEST_P(Core, SameProgramTwiceCompilesOnceInProcess) {
  const opkit::Device& device = *target().device;
  auto a = device.compile(opkit::Program(kTutorial).define("UNIQUE_TO_THIS_TEST", 1));
  auto b = device.compile(opkit::Program(kTutorial).define("UNIQUE_TO_THIS_TEST", 1));
  EXPECT_EQ(&a.program(), &b.program());
}

}  // namespace
