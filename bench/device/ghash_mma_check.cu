// Check and timing of src/ops/cipher/kernels/aes_ghash_mma.cuh before it goes into the AES
// program: every chunk's GHASH sum from the tensor-core form against a one-thread-a-chunk Horner
// loop (aes_gf128_mul, the math the library's GHASH kernel uses and tests against OpenSSL), on
// random data and a random H, then both timed on 1 GiB. Standalone, from the repository root:
//   nvcc -O3 -arch=sm_90 -I src/ops/cipher/kernels bench/device/ghash_mma_check.cu -o check && ./check
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "aes_ghash_mma.cuh"

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t e = (x);                                                            \
    if (e != cudaSuccess) {                                                         \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

__global__ void products_kernel(const AesGf128* h, AesGf128* products, AesGf128* row_powers) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < AES_MMA_PRODUCTS) products[j] = aes_mma_product(*h, j);
  if (j < AES_MMA_ROWS) row_powers[j] = aes_gf128_pow(*h, AES_MMA_ROW_BLOCKS * (15 - j));
}

__global__ void fragments_kernel(const AesGf128* products, uint2* fragments) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= AES_MMA_FRAGMENT_PAIRS) return;
  const int lane = j & 31, n = (j >> 5) % AES_MMA_NTILES, s = (j >> 5) / AES_MMA_NTILES;
  fragments[j] =
      make_uint2(aes_mma_fragment_word(products, s, n, lane, 0), aes_mma_fragment_word(products, s, n, lane, 1));
}

__global__ void __launch_bounds__(512, 1)
    mma_kernel(const uint4* data, unsigned long long chunks, const uint2* fragments_global, const AesGf128* row_powers,
               AesGf128* sums) {
  extern __shared__ uint2 fragments[];
  for (int i = threadIdx.x; i < AES_MMA_FRAGMENT_PAIRS; i += blockDim.x) fragments[i] = fragments_global[i];
  __syncthreads();
  const unsigned long long warps = (unsigned long long)gridDim.x * (blockDim.x / 32);
  for (unsigned long long c = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32; c < chunks; c += warps) {
    const AesGf128 sum = aes_mma_chunk(data, (long long)(c * AES_MMA_CHUNK_BLOCKS), chunks * AES_MMA_CHUNK_BLOCKS,
                                       fragments, row_powers);
    if ((threadIdx.x & 31) == 0) sums[c] = sum;
  }
}

__global__ void horner_kernel(const uint4* data, unsigned long long chunks, const AesGf128* h, AesGf128* sums) {
  const unsigned long long c = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= chunks) return;
  AesGf128 acc = {0, 0};
  const AesGf128 key = *h;
  for (int i = 0; i < AES_MMA_CHUNK_BLOCKS; ++i) {
    const uint4 v = data[c * AES_MMA_CHUNK_BLOCKS + i];
    const unsigned int w[4] = {v.x, v.y, v.z, v.w};
    const AesGf128 x = aes_gf128_from_words(w);
    acc.lo ^= x.lo;
    acc.hi ^= x.hi;
    acc = aes_gf128_mul(acc, key);
  }
  sums[c] = acc;
}

int main() {
  const unsigned long long chunks = (1ull << 30) / (16 * AES_MMA_CHUNK_BLOCKS);
  const size_t bytes = chunks * AES_MMA_CHUNK_BLOCKS * 16;
  std::vector<unsigned int> host(bytes / 4);
  unsigned long long x = 0x243f6a8885a308d3ull;
  for (auto& v : host) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = (unsigned int)(x >> 16);
  }
  AesGf128 h = {0x66e94bd4ef8a2c3bull ^ x, 0x884cfa59ca342b2eull + x};
  uint4* data;
  AesGf128 *dh, *products, *row_powers, *sums_mma, *sums_ref;
  uint2* fragments;
  CHECK(cudaMalloc(&data, bytes));
  CHECK(cudaMalloc(&dh, sizeof h));
  CHECK(cudaMalloc(&products, AES_MMA_PRODUCTS * sizeof(AesGf128)));
  CHECK(cudaMalloc(&row_powers, AES_MMA_ROWS * sizeof(AesGf128)));
  CHECK(cudaMalloc(&sums_mma, chunks * sizeof(AesGf128)));
  CHECK(cudaMalloc(&sums_ref, chunks * sizeof(AesGf128)));
  CHECK(cudaMalloc(&fragments, AES_MMA_FRAGMENT_PAIRS * sizeof(uint2)));
  CHECK(cudaMemcpy(data, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dh, &h, sizeof h, cudaMemcpyHostToDevice));

  cudaEvent_t e0, e1, e2, e3;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventCreate(&e2));
  CHECK(cudaEventCreate(&e3));
  const int smem = AES_MMA_FRAGMENT_PAIRS * sizeof(uint2);
  CHECK(cudaFuncSetAttribute(mma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float best_setup = 1e9f, best_mma = 1e9f, best_ref = 1e9f;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(cudaEventRecord(e0));
    products_kernel<<<(AES_MMA_PRODUCTS + 255) / 256, 256>>>(dh, products, row_powers);
    fragments_kernel<<<(AES_MMA_FRAGMENT_PAIRS + 255) / 256, 256>>>(products, fragments);
    CHECK(cudaEventRecord(e1));
    mma_kernel<<<sms, 512, smem>>>(data, chunks, fragments, row_powers, sums_mma);
    CHECK(cudaEventRecord(e2));
    horner_kernel<<<(chunks + 127) / 128, 128>>>(data, chunks, dh, sums_ref);
    CHECK(cudaEventRecord(e3));
    CHECK(cudaEventSynchronize(e3));
    CHECK(cudaGetLastError());
    float a, b, c;
    cudaEventElapsedTime(&a, e0, e1);
    cudaEventElapsedTime(&b, e1, e2);
    cudaEventElapsedTime(&c, e2, e3);
    best_setup = a < best_setup ? a : best_setup;
    best_mma = b < best_mma ? b : best_mma;
    best_ref = c < best_ref ? c : best_ref;
  }
  std::vector<AesGf128> a(chunks), b(chunks);
  CHECK(cudaMemcpy(a.data(), sums_mma, chunks * sizeof(AesGf128), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(b.data(), sums_ref, chunks * sizeof(AesGf128), cudaMemcpyDeviceToHost));
  unsigned long long wrong = 0;
  for (unsigned long long c = 0; c < chunks; ++c) wrong += a[c].lo != b[c].lo || a[c].hi != b[c].hi;
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf(
      "%s: %llu chunks of %d blocks (1 GiB): %llu sums differ (chunk 0: mma %016llx%016llx ref %016llx%016llx)\n",
      p.name, chunks, AES_MMA_CHUNK_BLOCKS, wrong, a[0].hi, a[0].lo, b[0].hi, b[0].lo);
  std::printf(
      "setup (products + fragments) %.3f ms; tensor-core GHASH %.3f ms = %.1f GB/s; Horner %.3f ms = %.1f GB/s\n",
      best_setup, best_mma, bytes / best_mma / 1e6, best_ref, bytes / best_ref / 1e6);
  return wrong == 0 ? 0 : 1;
}
