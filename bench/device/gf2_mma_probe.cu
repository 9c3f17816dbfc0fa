// Probe for docs/perf-cipher.md's GHASH-as-a-matrix-product idea: how fast this GPU runs the two
// tensor-core forms of a GF(2) dot product, measured before any GHASH kernel is written.
//   - b1: mma.sync m16n8k256 .b1 .and.popc (a 256-bit AND and a population count per product:
//     the parity of the count is the GF(2) dot product, with no expansion of the data);
//   - s8: mma.sync m16n8k32 .s8 with 0/1 operands (each data bit expanded to a byte first).
// Each warp runs a loop of independent MMAs on register operands (no memory traffic), so the
// rate is the tensor pipe's. Prints bit-products per second and what that rate implies for GHASH
// (128 products per data bit). Standalone: nvcc -O3 -arch=sm_90 gf2_mma_probe.cu -o probe
#include <cuda_runtime.h>
#include <cstdio>

constexpr int kChains = 8;  // independent accumulators per warp
constexpr int kIterations = 4096;

__global__ void mma_b1(int* sink, unsigned seed) {
  unsigned a[4] = {seed, seed * 3u, seed * 5u, seed * 7u}, b[2] = {seed ^ 0x9e3779b9u, seed + threadIdx.x};
  int d[kChains][4] = {};
  for (int i = 0; i < kIterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c)
      asm volatile(
          "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};\n"
          : "+r"(d[c][0]), "+r"(d[c][1]), "+r"(d[c][2]), "+r"(d[c][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  int s = 0;
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 0x7fffffff) sink[threadIdx.x] = s;
}

__global__ void mma_s8(int* sink, unsigned seed) {
  unsigned a[4] = {seed & 0x01010101u, (seed >> 1) & 0x01010101u, (seed >> 2) & 0x01010101u, (seed >> 3) & 0x01010101u};
  unsigned b[2] = {(seed >> 4) & 0x01010101u, (threadIdx.x) & 0x01010101u};
  int d[kChains][4] = {};
  for (int i = 0; i < kIterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c)
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
          : "+r"(d[c][0]), "+r"(d[c][1]), "+r"(d[c][2]), "+r"(d[c][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  int s = 0;
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  if (s == 0x7fffffff) sink[threadIdx.x] = s;
}

template <class Kernel>
double seconds(Kernel kernel, int blocks, int threads, int* sink) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  kernel<<<blocks, threads>>>(sink, 1u);  // warm-up
  cudaEventRecord(start);
  kernel<<<blocks, threads>>>(sink, 2u);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  return ms / 1e3;
}

int main() {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  int* sink;
  cudaMalloc(&sink, 1024 * sizeof(int));
  const int blocks = p.multiProcessorCount * 4, threads = 256;
  const double mmas = double(blocks) * (threads / 32) * kIterations * kChains;
  const double t1 = seconds(mma_b1, blocks, threads, sink);
  const double t8 = seconds(mma_s8, blocks, threads, sink);
  if (cudaGetLastError() != cudaSuccess) {
    std::printf("error: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  const double b1_products = mmas * 16 * 8 * 256 / t1, s8_products = mmas * 16 * 8 * 32 / t8;
  std::printf("%s, %d SMs\n", p.name, p.multiProcessorCount);
  std::printf("b1 and.popc m16n8k256: %.3f ms, %.1f T bit-products/s -> GHASH bound %.0f GB/s\n", t1 * 1e3,
              b1_products / 1e12, b1_products / 1024 / 1e9);
  std::printf("s8 m16n8k32:           %.3f ms, %.1f T products/s     -> GHASH bound %.0f GB/s\n", t8 * 1e3,
              s8_products / 1e12, s8_products / 1024 / 1e9);
  return 0;
}
