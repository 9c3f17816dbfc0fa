// CUDA C++ semantics on every device: barriers (tree reduction, tiled transpose), static and
// dynamic shared memory, atomics under contention, 3-D indices, templates, PyCUDA-style kernels,
// printf, math; plus memory, copies, streams and events. On a GPU machine this compares the CPU
// backend with real CUDA. One module holds most kernels so that each device pays for one compile.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>

#include "conformance/devices.hpp"
#include "opkit/opkit.hpp"

namespace {

const char* kKernels = R"cuda(
#define TILE 32
#define ROWS 8

__constant__ float kScale[4] = {1.0f, 2.0f, 4.0f, 8.0f};

__device__ __forceinline__ float square(float x) { return x * x; }

// Tree reduction in static shared memory; blockDim.x must be 256.
__global__ void __launch_bounds__(256) reduce_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float partial[256];
  const unsigned t = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + t;
  partial[t] = i < (unsigned)n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

// The classic tiled transpose: TILE x ROWS threads per block, a padded tile in shared memory.
__global__ void transpose(const float* in, float* out, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Each block reverses its slice through dynamic shared memory.
__global__ void reverse_blocks(int* data) {
  extern __shared__ int slice[];
  const int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  slice[t] = data[base + t];
  __syncthreads();
  data[base + t] = slice[blockDim.x - 1 - t];
}

// Namespace-scope and block-scope extern __shared__ of different types alias one buffer.
extern __shared__ unsigned char shared_bytes[];
__global__ void shared_views(unsigned* out) {
  extern __shared__ __align__(16) unsigned shared_words[];
  shared_words[threadIdx.x] = threadIdx.x * 3u + 1u;
  __syncthreads();
  out[threadIdx.x] = shared_bytes[4 * (blockDim.x - 1 - threadIdx.x)];
}

struct Counters {
  int add;
  unsigned inc, dec;
  int min, max;
  unsigned or_bits, and_bits, xor_bits;
  int sub;
  unsigned cas_count;
  unsigned long long add64;
  float fadd;
  double dadd;
  long long min64;
  unsigned long long max64;
  unsigned exch;
};

// Every thread of the grid hits the same words.
__global__ void contend(Counters* c) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&c->add, 1);
  atomicInc(&c->inc, 99u);
  atomicDec(&c->dec, 99u);
  atomicMin(&c->min, 1000 - i);
  atomicMax(&c->max, i - 5);
  atomicOr(&c->or_bits, 1u << (i % 32));
  atomicAnd(&c->and_bits, ~(1u << (i % 32)));
  atomicXor(&c->xor_bits, (unsigned)i);
  atomicSub(&c->sub, 2);
  unsigned seen, old = atomicAdd(&c->cas_count, 0u);
  do {
    seen = old;
    old = atomicCAS(&c->cas_count, seen, seen + 1u);
  } while (old != seen);
  atomicAdd(&c->add64, (unsigned long long)i);
  atomicAdd(&c->fadd, 1.0f);
  atomicAdd(&c->dadd, 0.5);
  atomicMin(&c->min64, -(long long)i * 1000000000LL);
  atomicMax(&c->max64, (unsigned long long)i << 33);
  atomicExch(&c->exch, (unsigned)i);
}

__global__ void index3d(unsigned* out) {
  unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[block * blockDim.x * blockDim.y * blockDim.z + thread] = (blockIdx.z << 24) | (blockIdx.y << 16) |
      (blockIdx.x << 12) | (threadIdx.z << 8) | (threadIdx.y << 4) | threadIdx.x;
}

__global__ void vote_counts(const int* flags, int* out) {
  int f = flags[blockIdx.x * blockDim.x + threadIdx.x];
  int count = __syncthreads_count(f);
  int all = __syncthreads_and(f);
  int any = __syncthreads_or(f);
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = count;
    out[3 * blockIdx.x + 1] = all;
    out[3 * blockIdx.x + 2] = any;
  }
}

// Threads that return early no longer take part in barriers, as on sm_70 and later.
__global__ void early_exit(int* out, int live) {
  __shared__ int total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  if ((int)threadIdx.x >= live) return;
  atomicAdd(&total, 1);
  __syncthreads();
  out[threadIdx.x] = total;
}

// `static __shared__` in a __device__ helper is per block too.
__device__ int block_total(int v) {
  static __shared__ int acc;
  if (threadIdx.x == 0) acc = 0;
  __syncthreads();
  atomicAdd(&acc, v);
  __syncthreads();
  int r = acc;
  __syncthreads();
  return r;
}
__global__ void helper_shared(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = block_total(threadIdx.x + 1); }

template <typename T>
__device__ T twice(T v) { return v + v; }
template <typename T>
__global__ void scale(T* data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = twice(data[i]) * factor;
}

__global__ void math_funcs(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[4 * i] = sinf(v) * kScale[1];
  out[4 * i + 1] = sqrtf(fabsf(v)) + rsqrtf(1.0f + square(v));
  out[4 * i + 2] = expf(-v * v) + __expf(0.5f * v);
  out[4 * i + 3] = fmaxf(v, 0.0f) + min(v, 1.0f) + (float)max(1, 2);
}

__global__ void say_hello(int tag) {
  if (threadIdx.x < 2) printf("hello %d from thread %u\n", tag, threadIdx.x);
}
)cuda";

// The multiply_them example from PyCUDA's documentation, verbatim.
const char* kPyCudaKernel = R"cuda(
__global__ void multiply_them(float *dest, float *a, float *b)
{
  const int i = threadIdx.x;
  dest[i] = a[i] * b[i];
}
)cuda";

struct Counters {
  int add;
  unsigned inc, dec;
  int min, max;
  unsigned or_bits, and_bits, xor_bits;
  int sub;
  unsigned cas_count;
  unsigned long long add64;
  float fadd;
  double dadd;
  long long min64;
  unsigned long long max64;
  unsigned exch;
};

OPKIT_CONFORMANCE_DEVICE_SUITE(KernelSemantics);

// The test's device (a suite of devices only: host has no kernel language).
const opkit::Device& device_under_test() {
  return *testing::TestWithParam<opkit::test::Target>::GetParam().device;
}

// The shared module, compiled once per device.
const opkit::Module& kernels() {
  static auto* modules = new std::map<std::string, opkit::Module>();  // outlives static destruction
  const auto& target = testing::TestWithParam<opkit::test::Target>::GetParam();
  auto found = modules->find(target.name);
  if (found == modules->end())
    found = modules
                ->emplace(target.name, target.device->compile(opkit::Program(kKernels)
                                                                  .name("kernel_semantics.cu")
                                                                  .name_expression("scale<float>")
                                                                  .name_expression("scale<int>")))
                .first;
  return found->second;
}

std::mt19937& rng() {
  static std::mt19937 engine{std::random_device{}()};
  return engine;
}

TEST_P(KernelSemantics, SharedMemoryTreeReductionMatchesHostSum) {
  const int n = 50000, blocks = (n + 255) / 256;
  std::uniform_int_distribution<int> value(0, 100);
  std::vector<float> host(n);
  for (float& v : host) v = static_cast<float>(value(rng()));  // integers: every order sums exactly
  auto in = device_under_test().alloc<float>(n);
  auto out = device_under_test().alloc<float>(blocks);
  in.copy_from(host);
  kernels().kernel("reduce_sum").launch({.grid = blocks, .block = 256}, in, out, n);
  std::vector<float> partial = out.to_host();
  for (int b = 0; b < blocks; ++b) {
    float expected = 0;
    for (int i = b * 256; i < std::min(n, b * 256 + 256); ++i) expected += host[i];
    ASSERT_EQ(partial[b], expected) << "block " << b;
  }
}

TEST_P(KernelSemantics, TiledTransposeWithTwoDimensionalBlocks) {
  const int width = 77, height = 45;
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> host(width * height);
  for (float& v : host) v = value(rng());
  auto in = device_under_test().alloc<float>(host.size());
  auto out = device_under_test().alloc<float>(host.size());
  in.copy_from(host);
  kernels()
      .kernel("transpose")
      .launch({.grid = {(width + 31) / 32, (height + 31) / 32}, .block = {32, 8}}, in, out, width, height);
  std::vector<float> t = out.to_host();
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) ASSERT_EQ(t[x * height + y], host[y * width + x]) << x << "," << y;
}

TEST_P(KernelSemantics, DynamicSharedMemoryIsPerBlock) {
  const int block = 128, blocks = 37;
  std::vector<int> host(block * blocks);
  std::iota(host.begin(), host.end(), 0);
  std::shuffle(host.begin(), host.end(), rng());
  auto data = device_under_test().alloc<int>(host.size());
  data.copy_from(host);
  kernels().kernel("reverse_blocks").launch({.grid = blocks, .block = block, .shared_bytes = block * 4}, data);
  std::vector<int> out = data.to_host();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < block; ++t) ASSERT_EQ(out[b * block + t], host[b * block + block - 1 - t]);
}

TEST_P(KernelSemantics, ExternSharedDeclarationsAliasOneBuffer) {
  const unsigned block = 64;
  auto out = device_under_test().alloc<unsigned>(block);
  kernels().kernel("shared_views").launch({.grid = 1, .block = block, .shared_bytes = block * 4}, out);
  std::vector<unsigned> got = out.to_host();
  for (unsigned t = 0; t < block; ++t) EXPECT_EQ(got[t], ((block - 1 - t) * 3u + 1u) & 0xffu) << t;
}

TEST_P(KernelSemantics, AtomicsUnderContentionGiveExactTotals) {
  const int blocks = 64, threads = 256, n = blocks * threads;
  Counters init{};
  init.min = INT_MAX;
  init.max = INT_MIN;
  init.and_bits = 0xffffffffu;
  init.exch = 0xffffffffu;
  auto counters = device_under_test().alloc<Counters>(1);
  counters.copy_from(std::span<const Counters>(&init, 1));
  kernels().kernel("contend").launch({.grid = blocks, .block = threads}, counters);
  Counters c = counters.to_host()[0];
  unsigned xor_all = 0;
  for (int i = 0; i < n; ++i) xor_all ^= static_cast<unsigned>(i);
  EXPECT_EQ(c.add, n);
  EXPECT_EQ(c.inc, static_cast<unsigned>(n % 100));
  EXPECT_EQ(c.dec, static_cast<unsigned>((100 - n % 100) % 100));
  EXPECT_EQ(c.min, 1000 - (n - 1));
  EXPECT_EQ(c.max, n - 1 - 5);
  EXPECT_EQ(c.or_bits, 0xffffffffu);
  EXPECT_EQ(c.and_bits, 0u);
  EXPECT_EQ(c.xor_bits, xor_all);
  EXPECT_EQ(c.sub, -2 * n);
  EXPECT_EQ(c.cas_count, static_cast<unsigned>(n));
  EXPECT_EQ(c.add64, static_cast<unsigned long long>(n) * (n - 1) / 2);
  EXPECT_EQ(c.fadd, static_cast<float>(n));
  EXPECT_EQ(c.dadd, n * 0.5);
  EXPECT_EQ(c.min64, -static_cast<long long>(n - 1) * 1000000000LL);
  EXPECT_EQ(c.max64, static_cast<unsigned long long>(n - 1) << 33);
  EXPECT_LT(c.exch, static_cast<unsigned>(n));
}

TEST_P(KernelSemantics, ThreeDimensionalIndicesCoverTheGrid) {
  const opkit::Dim3 grid{3, 2, 2}, block{4, 3, 2};
  auto out = device_under_test().alloc<unsigned>(grid.count() * block.count());
  out.fill(0xdeadbeefu);
  kernels().kernel("index3d").launch({.grid = grid, .block = block}, out);
  std::vector<unsigned> got = out.to_host();
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              unsigned b = bx + grid.x * (by + grid.y * bz), t = tx + block.x * (ty + block.y * tz);
              ASSERT_EQ(got[b * block.count() + t], (bz << 24) | (by << 16) | (bx << 12) | (tz << 8) | (ty << 4) | tx);
            }
}

TEST_P(KernelSemantics, SyncthreadsCountAndOr) {
  const int block = 96, blocks = 5;
  std::vector<int> flags(block * blocks);
  std::bernoulli_distribution coin(0.5);
  for (int& f : flags) f = coin(rng()) ? 1 : 0;
  std::fill(flags.begin() + block, flags.begin() + 2 * block, 1);      // block 1: all true
  std::fill(flags.begin() + 2 * block, flags.begin() + 3 * block, 0);  // block 2: all false
  auto in = device_under_test().alloc<int>(flags.size());
  auto out = device_under_test().alloc<int>(3 * blocks);
  in.copy_from(flags);
  kernels().kernel("vote_counts").launch({.grid = blocks, .block = block}, in, out);
  std::vector<int> got = out.to_host();
  for (int b = 0; b < blocks; ++b) {
    int count = std::accumulate(flags.begin() + b * block, flags.begin() + (b + 1) * block, 0);
    EXPECT_EQ(got[3 * b], count) << b;
    EXPECT_EQ(got[3 * b + 1], count == block ? 1 : 0) << b;
    EXPECT_EQ(got[3 * b + 2], count > 0 ? 1 : 0) << b;
  }
}

TEST_P(KernelSemantics, ExitedThreadsDoNotHoldBarriers) {
  const int block = 64, live = 23;
  auto out = device_under_test().alloc<int>(block);
  out.fill(-1);
  kernels().kernel("early_exit").launch({.grid = 1, .block = block}, out, live);
  std::vector<int> got = out.to_host();
  for (int t = 0; t < block; ++t) EXPECT_EQ(got[t], t < live ? live : -1) << t;
}

TEST_P(KernelSemantics, StaticSharedInDeviceHelperIsPerBlock) {
  const int block = 50, blocks = 9;
  auto out = device_under_test().alloc<int>(block * blocks);
  kernels().kernel("helper_shared").launch({.grid = blocks, .block = block}, out);
  for (int v : out.to_host()) ASSERT_EQ(v, block * (block + 1) / 2);
}

TEST_P(KernelSemantics, TemplateKernelsThroughNameExpressions) {
  const int n = 300;
  std::vector<float> f(n);
  std::vector<int> i(n);
  std::uniform_int_distribution<int> value(-1000, 1000);
  for (int k = 0; k < n; ++k) i[k] = value(rng()), f[k] = static_cast<float>(i[k]) * 0.25f;
  auto fd = device_under_test().alloc<float>(n);
  auto id = device_under_test().alloc<int>(n);
  fd.copy_from(f);
  id.copy_from(i);
  kernels().kernel("scale<float>").launch({.grid = 3, .block = 128}, fd, 1.5f, n);
  kernels().kernel("scale<int>").launch({.grid = 3, .block = 128}, id, 3, n);
  std::vector<float> fo = fd.to_host();
  std::vector<int> io = id.to_host();
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(fo[k], (f[k] + f[k]) * 1.5f);
    EXPECT_EQ(io[k], (i[k] + i[k]) * 3);
  }
}

TEST_P(KernelSemantics, PyCudaStyleKernelRunsUnchanged) {
  auto module = device_under_test().compile(opkit::Program(kPyCudaKernel).name("pycuda_multiply.cu"));
  const int n = 400;
  std::uniform_real_distribution<float> value(-10, 10);
  std::vector<float> a(n), b(n);
  for (int k = 0; k < n; ++k) a[k] = value(rng()), b[k] = value(rng());
  auto da = device_under_test().alloc<float>(n), db = device_under_test().alloc<float>(n),
       dest = device_under_test().alloc<float>(n);
  da.copy_from(a);
  db.copy_from(b);
  module.kernel("multiply_them").launch({.grid = 1, .block = n}, dest, da, db);
  std::vector<float> got = dest.to_host();
  for (int k = 0; k < n; ++k) EXPECT_EQ(got[k], a[k] * b[k]);
}

TEST_P(KernelSemantics, MathFunctionsAndConstantMemory) {
  const int n = 200;
  std::uniform_real_distribution<float> value(-4, 4);
  std::vector<float> x(n);
  for (float& v : x) v = value(rng());
  auto in = device_under_test().alloc<float>(n);
  auto out = device_under_test().alloc<float>(4 * n);
  in.copy_from(x);
  kernels().kernel("math_funcs").launch({.grid = 2, .block = 128}, in, out, n);
  std::vector<float> got = out.to_host();
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    EXPECT_NEAR(got[4 * i], std::sin(v) * 2.0f, 1e-5f);
    EXPECT_NEAR(got[4 * i + 1], std::sqrt(std::fabs(v)) + 1.0f / std::sqrt(1.0f + v * v), 1e-5f);
    EXPECT_NEAR(got[4 * i + 2], std::exp(-v * v) + std::exp(0.5f * v), 1e-4f);
    EXPECT_FLOAT_EQ(got[4 * i + 3], std::fmax(v, 0.0f) + std::fmin(v, 1.0f) + 2.0f);
  }
}

TEST_P(KernelSemantics, KernelPrintfReachesStdout) {
  std::fflush(stdout);
  testing::internal::CaptureStdout();
  kernels().kernel("say_hello").launch({.grid = 1, .block = 32}, 7);
  device_under_test().synchronize();  // a GPU's printf buffer is written out at synchronisation
  std::fflush(stdout);
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("hello 7 from thread 0\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("hello 7 from thread 1\n"), std::string::npos) << printed;
}

TEST_P(KernelSemantics, FillsOfEveryPatternWidthAndCopies) {
  const opkit::Device& dev = device_under_test();
  dev.deallocate(dev.allocate(0));
  auto bytes = dev.alloc<std::uint8_t>(5);
  bytes.fill(0xab);
  EXPECT_EQ(bytes.to_host(), std::vector<std::uint8_t>(5, 0xab));
  auto halves = dev.alloc<std::uint16_t>(3);
  halves.fill(0x1234);
  EXPECT_EQ(halves.to_host(), std::vector<std::uint16_t>(3, 0x1234));
  auto words = dev.alloc<float>(4);
  words.fill(2.5f);
  EXPECT_EQ(words.to_host(), std::vector<float>(4, 2.5f));
  auto copy = dev.alloc<float>(4);
  copy.copy_from(words);
  EXPECT_EQ(copy.to_host(), std::vector<float>(4, 2.5f));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(words.data()) % 256, 0u);
}

TEST_P(KernelSemantics, EventsOnAStreamMeasureElapsedTime) {
  const opkit::Device& dev = device_under_test();
  opkit::Stream stream = dev.create_stream();
  opkit::Event start = dev.create_event(), stop = dev.create_event();
  start.record(stream);
  auto out = dev.alloc<int>(8);
  kernels().kernel("early_exit").launch({.grid = 1, .block = 8, .stream = &stream}, out, 8);
  stop.record(stream);
  stop.synchronize();
  EXPECT_GE(opkit::Event::elapsed_ms(start, stop), 0.0f);
  EXPECT_EQ(out.to_host(), std::vector<int>(8, 8));
}

}  // namespace
