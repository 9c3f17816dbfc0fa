// The host SHA-256 compressions (src/ops/sha256/sha256_compress.hpp): the kernels' core compiled
// for the host and SHA-NI where the CPU has it, each driven through whole messages and compared
// with an independent one-shot OpenSSL reference on fresh random input.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "ops/sha256/sha256_compress.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

namespace detail = opkit::ops::detail;
using opkit::Sha256Digest;
using opkit::ops::HashAlgo;

// Full SHA-256 through a compression function: the message padded by hand (FIPS 180-4 §5.1.1).
Sha256Digest hash_with(detail::Sha256Compress compress, const std::vector<std::uint8_t>& msg) {
  std::vector<std::uint8_t> padded = msg;
  padded.push_back(0x80);
  while (padded.size() % 64 != 56) padded.push_back(0);
  const std::uint64_t bits = 8 * msg.size();
  for (int i = 7; i >= 0; --i) padded.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  auto state = detail::sha256_iv;
  for (std::size_t at = 0; at < padded.size(); at += 64) compress(state.data(), padded.data() + at);
  Sha256Digest d;
  for (int i = 0; i < 8; ++i) detail::store_be32(d.data() + 4 * i, state[i]);
  return d;
}

TEST(Sha256Compress, PortableAndShaNiMatchOpenSslOnFreshRandomMessages) {
  std::random_device device;
  std::mt19937_64 rng((std::uint64_t{device()} << 32) | device());
  std::vector<detail::Sha256Compress> compressions = {&detail::sha256_compress_portable};
  if (detail::sha_ni_available()) compressions.push_back(&detail::sha256_compress_sha_ni);
  for (std::size_t len : {0, 1, 55, 56, 63, 64, 65, 80, 119, 120, 200, 1000, 4097}) {
    const std::vector<std::uint8_t> msg = opkit::test::random_bytes(rng, len);
    const std::string expected = opkit::test::hex(opkit::test::reference_sha256(msg, HashAlgo::sha256));
    for (std::size_t k = 0; k < compressions.size(); ++k)
      EXPECT_EQ(opkit::test::hex(hash_with(compressions[k], msg)), expected)
          << len << " bytes, " << (k == 0 ? "portable" : "sha-ni");
  }
}

TEST(Sha256Compress, KnownAnswerAndTheBestChoiceNamesWhatItRuns) {
  // FIPS 180-4's "abc" through the choice the miners use.
  const std::vector<std::uint8_t> abc = {'a', 'b', 'c'};
  EXPECT_EQ(opkit::test::hex(hash_with(detail::best_sha256_compress(), abc)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(std::string(detail::best_sha256_compress_name()), detail::sha_ni_available() ? "sha-ni" : "portable");
  EXPECT_EQ(detail::best_sha256_compress() == &detail::sha256_compress_sha_ni, detail::sha_ni_available());
}

}  // namespace
