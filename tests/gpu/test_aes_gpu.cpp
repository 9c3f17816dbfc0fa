// The AES device kernels on a CUDA GPU: the same vectors and OpenSSL differentials as the CPU
// backend tests (tests/unit/test_aes_kernels.cpp), plus large messages (MiB and 1 GiB) and a
// batch of packets. Skips without a GPU.
#include <gtest/gtest.h>

#include <numeric>

#include "gpu/gpu_test.hpp"
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
