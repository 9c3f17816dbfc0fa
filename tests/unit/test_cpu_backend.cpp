// The CPU backend runs CUDA C++ kernels: barriers (tree reduction, tiled transpose), static and
// dynamic shared memory, atomics under contention, 3-D indices, templates, PyCUDA-style kernels,
// printf, math; plus its memory, events and device facts. One module holds most kernels so that
// the suite pays for one host compile.
#include <gtest/gtest.h>

#include <sys/utsname.h>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

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

opkit::Device cpu() {
  return opkit::Device::cpu();
}

const opkit::Module& kernels() {
  static const opkit::Module module = cpu().compile(opkit::Program(kKernels)
                                                        .name("cpu_backend_kernels.cu")
                                                        .name_expression("scale<float>")
                                                        .name_expression("scale<int>"));
  return module;
}

std::mt19937& rng() {
  static std::mt19937 engine{std::random_device{}()};
  return engine;
}

TEST(CpuBackend, SharedMemoryTreeReductionMatchesHostSum) {
  const int n = 50000, blocks = (n + 255) / 256;
  std::uniform_int_distribution<int> value(0, 100);
  std::vector<float> host(n);
  for (float& v : host) v = static_cast<float>(value(rng()));  // integers: every order sums exactly
  auto in = cpu().alloc<float>(n);
  auto out = cpu().alloc<float>(blocks);
  in.copy_from(host);
  kernels().kernel("reduce_sum").launch({.grid = blocks, .block = 256}, in, out, n);
  std::vector<float> partial = out.to_host();
  for (int b = 0; b < blocks; ++b) {
    float expected = 0;
    for (int i = b * 256; i < std::min(n, b * 256 + 256); ++i) expected += host[i];
    ASSERT_EQ(partial[b], expected) << "block " << b;
  }
}

TEST(CpuBackend, TiledTransposeWithTwoDimensionalBlocks) {
  const int width = 77, height = 45;
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> host(width * height);
  for (float& v : host) v = value(rng());
  auto in = cpu().alloc<float>(host.size());
  auto out = cpu().alloc<float>(host.size());
  in.copy_from(host);
  kernels()
      .kernel("transpose")
      .launch({.grid = {(width + 31) / 32, (height + 31) / 32}, .block = {32, 8}}, in, out, width, height);
  std::vector<float> t = out.to_host();
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) ASSERT_EQ(t[x * height + y], host[y * width + x]) << x << "," << y;
}

TEST(CpuBackend, DynamicSharedMemoryIsPerBlock) {
  const int block = 128, blocks = 37;
  std::vector<int> host(block * blocks);
  std::iota(host.begin(), host.end(), 0);
  std::shuffle(host.begin(), host.end(), rng());
  auto data = cpu().alloc<int>(host.size());
  data.copy_from(host);
  kernels().kernel("reverse_blocks").launch({.grid = blocks, .block = block, .shared_bytes = block * 4}, data);
  std::vector<int> out = data.to_host();
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < block; ++t) ASSERT_EQ(out[b * block + t], host[b * block + block - 1 - t]);
}

TEST(CpuBackend, ExternSharedDeclarationsAliasOneBuffer) {
  const unsigned block = 64;
  auto out = cpu().alloc<unsigned>(block);
  kernels().kernel("shared_views").launch({.grid = 1, .block = block, .shared_bytes = block * 4}, out);
  std::vector<unsigned> got = out.to_host();
  for (unsigned t = 0; t < block; ++t) EXPECT_EQ(got[t], ((block - 1 - t) * 3u + 1u) & 0xffu) << t;
}

TEST(CpuBackend, AtomicsUnderContentionGiveExactTotals) {
  const int blocks = 64, threads = 256, n = blocks * threads;
  Counters init{};
  init.min = INT_MAX;
  init.max = INT_MIN;
  init.and_bits = 0xffffffffu;
  init.exch = 0xffffffffu;
  auto counters = cpu().alloc<Counters>(1);
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

TEST(CpuBackend, ThreeDimensionalIndicesCoverTheGrid) {
  const opkit::Dim3 grid{3, 2, 2}, block{4, 3, 2};
  auto out = cpu().alloc<unsigned>(grid.count() * block.count());
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

TEST(CpuBackend, SyncthreadsCountAndOr) {
  const int block = 96, blocks = 5;
  std::vector<int> flags(block * blocks);
  std::bernoulli_distribution coin(0.5);
  for (int& f : flags) f = coin(rng()) ? 1 : 0;
  std::fill(flags.begin() + block, flags.begin() + 2 * block, 1);      // block 1: all true
  std::fill(flags.begin() + 2 * block, flags.begin() + 3 * block, 0);  // block 2: all false
  auto in = cpu().alloc<int>(flags.size());
  auto out = cpu().alloc<int>(3 * blocks);
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

TEST(CpuBackend, ExitedThreadsDoNotHoldBarriers) {
  const int block = 64, live = 23;
  auto out = cpu().alloc<int>(block);
  out.fill(-1);
  kernels().kernel("early_exit").launch({.grid = 1, .block = block}, out, live);
  std::vector<int> got = out.to_host();
  for (int t = 0; t < block; ++t) EXPECT_EQ(got[t], t < live ? live : -1) << t;
}

TEST(CpuBackend, StaticSharedInDeviceHelperIsPerBlock) {
  const int block = 50, blocks = 9;
  auto out = cpu().alloc<int>(block * blocks);
  kernels().kernel("helper_shared").launch({.grid = blocks, .block = block}, out);
  for (int v : out.to_host()) ASSERT_EQ(v, block * (block + 1) / 2);
}

TEST(CpuBackend, TemplateKernelsThroughNameExpressions) {
  const int n = 300;
  std::vector<float> f(n);
  std::vector<int> i(n);
  std::uniform_int_distribution<int> value(-1000, 1000);
  for (int k = 0; k < n; ++k) i[k] = value(rng()), f[k] = static_cast<float>(i[k]) * 0.25f;
  auto fd = cpu().alloc<float>(n);
  auto id = cpu().alloc<int>(n);
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

TEST(CpuBackend, PyCudaStyleKernelRunsUnchanged) {
  auto module = cpu().compile(opkit::Program(kPyCudaKernel).name("pycuda_multiply.cu"));
  const int n = 400;
  std::uniform_real_distribution<float> value(-10, 10);
  std::vector<float> a(n), b(n);
  for (int k = 0; k < n; ++k) a[k] = value(rng()), b[k] = value(rng());
  auto da = cpu().alloc<float>(n), db = cpu().alloc<float>(n), dest = cpu().alloc<float>(n);
  da.copy_from(a);
  db.copy_from(b);
  module.kernel("multiply_them").launch({.grid = 1, .block = n}, dest, da, db);
  std::vector<float> got = dest.to_host();
  for (int k = 0; k < n; ++k) EXPECT_EQ(got[k], a[k] * b[k]);
}

TEST(CpuBackend, MathFunctionsAndConstantMemory) {
  const int n = 200;
  std::uniform_real_distribution<float> value(-4, 4);
  std::vector<float> x(n);
  for (float& v : x) v = value(rng());
  auto in = cpu().alloc<float>(n);
  auto out = cpu().alloc<float>(4 * n);
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

TEST(CpuBackend, KernelPrintfReachesStdout) {
  std::fflush(stdout);
  testing::internal::CaptureStdout();
  kernels().kernel("say_hello").launch({.grid = 1, .block = 32}, 7);
  std::fflush(stdout);
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("hello 7 from thread 0\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("hello 7 from thread 1\n"), std::string::npos) << printed;
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

TEST(CpuBackend, ZeroByteAllocationsFillsAndCopies) {
  opkit::Device dev = cpu();
  void* empty = dev.allocate(0);
  EXPECT_NE(empty, nullptr);
  dev.deallocate(empty);
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

TEST(CpuBackend, EventsMeasureElapsedTime) {
  opkit::Device dev = cpu();
  opkit::Stream stream = dev.create_stream();
  opkit::Event start = dev.create_event(), stop = dev.create_event();
  start.record(stream);
  auto out = dev.alloc<int>(8);
  kernels().kernel("early_exit").launch({.grid = 1, .block = 8, .stream = &stream}, out, 8);
  stop.record(stream);
  stop.synchronize();
  EXPECT_GE(opkit::Event::elapsed_ms(start, stop), 0.0f);
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
