// The AES device kernels on a CUDA GPU: the same vectors and OpenSSL differentials as the CPU
// backend tests (tests/unit/test_aes_kernels.cpp), plus large messages (MiB and 1 GiB) and a
// batch of packets. Skips without a GPU.
#include <gtest/gtest.h>

#include <numeric>

#include "gpu/gpu_test.hpp"
#include "ops/cipher/aes_batch_io.hpp"
#include "unit/test_aes_batch_edges.hpp"
#include "unit/test_aes_reference.hpp"

namespace {

using namespace opkit::test::aes;

TEST(AesGpu, CtrMatchesSp80038aVectors) {
  OPKIT_SKIP_WITHOUT_GPU();
  check_ctr_vectors(gpu);
}

TEST(AesGpu, GcmMatchesPublishedVectorsWithTruncatedAndFailingTags) {
  OPKIT_SKIP_WITHOUT_GPU();
  check_gcm_vectors(gpu);
}

TEST(AesGpu, CtrAndGcmMatchOpenSslForLengths0To300) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::vector<std::size_t> lengths(301);
  std::iota(lengths.begin(), lengths.end(), 0);
  check_against_openssl(gpu, lengths, 11);
}

TEST(AesGpu, CtrAndGcmMatchOpenSslOnMiBAndGiBMessages) {
  OPKIT_SKIP_WITHOUT_GPU();
  check_against_openssl(gpu, {(1u << 20) + 5, (16u << 20) + 4093, (1u << 30) + 77}, 12);
}

// Bulk GHASH's whole chunks of data on the tensor cores (from 2048 blocks) and the rest of the
// stream through the Horner loop: lengths around the 8 KiB chunks, random AAD (which moves the
// chunk boundaries within the data) and misaligned buffers (no tensor cores), both engines.
TEST(AesGpu, GcmMatchesOpenSslAroundTensorCoreChunksWithBothGhashEngines) {
  OPKIT_SKIP_WITHOUT_GPU();
  const std::vector<std::size_t> lengths = {
      32752,         32768, 32769, 40000, 57349, 65536 + 15, 8192 * 9 - 1, (1u << 20) + 3, (3u << 20) + 16 * 511,
      (5u << 20) - 7};
  for (auto engine : {opkit::ops::aes::GhashEngine::tensor_cores, opkit::ops::aes::GhashEngine::horner}) {
    opkit::ops::aes::set_ghash_engine(engine);
    check_against_openssl(gpu, lengths, 31);
    check_against_openssl(gpu, lengths, 32);
  }
  opkit::ops::aes::set_ghash_engine(opkit::ops::aes::GhashEngine::tensor_cores);
}

TEST(AesGpu, CtrCounterCarriesAcross2To32And2To64AndWrapsAt2To128) {
  OPKIT_SKIP_WITHOUT_GPU();
  check_ctr_carries(gpu, 300000);
}

TEST(AesGpu, BatchesMatchOpenSslAndReportFailingTags) {
  OPKIT_SKIP_WITHOUT_GPU();
  check_batch(gpu, 20000, false, 1500, 16, 12, 13);
  check_batch(gpu, 3000, true, 0, 32, 12, 14);
  check_batch(gpu, 500, true, 0, 24, 7, 15);
}

TEST(AesGpu, BatchesAtEdgeLengthsAndPlacementsMatchOpenSslThroughBothIos) {
  OPKIT_SKIP_WITHOUT_GPU();
  check_batch_edges(gpu, 3000, 16);
}

}  // namespace
