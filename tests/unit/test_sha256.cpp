// The SHA-256 operators' host-CPU path (OpenSSL, OpenMP) and input checks, against an
// independent one-shot OpenSSL reference on fresh random messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string_view>

#include "opkit/error.hpp"
#include "opkit/ops/sha256.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

using opkit::ops::HashAlgo;
using opkit::ops::HashOptions;
using namespace opkit::test;

const HashOptions kHostCpu{.host_cpu = true};

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::mt19937_64 fresh_rng() {
  std::random_device device;
  return std::mt19937_64((std::uint64_t{device()} << 32) | device());
}

TEST(Sha256Cpu, KnownAnswersFromFips180) {
  EXPECT_EQ(hex(opkit::ops::sha256(bytes_of(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(opkit::ops::sha256(bytes_of("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(opkit::ops::sha256(bytes_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Bitcoin's double SHA-256 of the empty string.
  EXPECT_EQ(hex(opkit::ops::sha256d(bytes_of(""))), "5df6e0e2761359d30a8275058e299fcc0381534545f55cf43e41983f5d4c9456");
}

TEST(Sha256Cpu, FixedBatchesOfEveryLengthUpTo300MatchOpenSsl) {
  auto rng = fresh_rng();
  for (HashAlgo algo : {HashAlgo::sha256, HashAlgo::sha256d}) {
    for (std::size_t len = 0; len <= 300; ++len) {
      const std::size_t count = 1 + rng() % 5;
      auto data = random_bytes(rng, len * count);
      std::vector<std::uint8_t> digests(count * 32);
      if (algo == HashAlgo::sha256)
        opkit::ops::sha256(data, len, digests, kHostCpu);
      else
        opkit::ops::sha256d(data, len, digests, kHostCpu);
      ASSERT_EQ(first_mismatch(digests, fixed_messages(data, len, count), algo), "") << "length " << len;
    }
  }
}

TEST(Sha256Cpu, VariableBatchWithUnalignedOffsetsMatchesOpenSsl) {
  auto rng = fresh_rng();
  std::vector<std::size_t> lengths;
  for (std::size_t len = 0; len <= 300; ++len) lengths.push_back(len);
  for (int i = 0; i < 200; ++i) lengths.push_back(rng() % 2000);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  auto batch = make_variable_batch(rng, lengths);
  for (HashAlgo algo : {HashAlgo::sha256, HashAlgo::sha256d}) {
    std::vector<std::uint8_t> digests(lengths.size() * 32);
    if (algo == HashAlgo::sha256)
      opkit::ops::sha256(batch.data, batch.offsets, digests, kHostCpu);
    else
      opkit::ops::sha256d(batch.data, batch.offsets, digests, kHostCpu);
    ASSERT_EQ(first_mismatch(digests, variable_messages(batch), algo), "");
  }
}

TEST(Sha256Cpu, LongMessagesUpToOneMebibyteMatchOpenSsl) {
  auto rng = fresh_rng();
  for (std::size_t len : {std::size_t{65537}, std::size_t{1} << 20}) {
    auto data = random_bytes(rng, len * 2);
    std::vector<std::uint8_t> digests(64);
    opkit::ops::sha256(data, len, digests, kHostCpu);
    EXPECT_EQ(first_mismatch(digests, fixed_messages(data, len, 2), HashAlgo::sha256), "");
  }
}

TEST(Sha256Cpu, EmptyBatchWritesNothingAndBatchOfOneWorks) {
  std::vector<std::uint8_t> none;
  opkit::ops::sha256(std::span<const std::uint8_t>(), 32, std::span<std::uint8_t>(none), kHostCpu);
  std::vector<std::uint64_t> one_offset{0};
  opkit::ops::sha256(std::span<const std::uint8_t>(), one_offset, std::span<std::uint8_t>(none), kHostCpu);

  auto rng = fresh_rng();
  auto data = random_bytes(rng, 77);
  std::vector<std::uint8_t> digest(32);
  opkit::ops::sha256(data, 77, digest, kHostCpu);
  EXPECT_EQ(first_mismatch(digest, fixed_messages(data, 77, 1), HashAlgo::sha256), "");
}

TEST(Sha256Cpu, EmptyMessagesOfLengthZeroHashToTheEmptyDigest) {
  std::vector<std::uint8_t> digests(3 * 32);
  opkit::ops::sha256(std::span<const std::uint8_t>(), 0, digests, kHostCpu);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(hex(std::span<const std::uint8_t>(digests).subspan(32 * i, 32)),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

void expect_invalid(const std::function<void()>& call, std::string_view needle) {
  try {
    call();
    ADD_FAILURE() << "no error for bad input (expected one mentioning '" << needle << "')";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
    EXPECT_NE(std::string(e.message()).find(needle), std::string::npos) << e.message();
  }
}

TEST(Sha256Cpu, BadShapesAndOffsetsAreRejectedWithAClearMessage) {
  std::vector<std::uint8_t> data(100), digests(64), odd(33);
  expect_invalid([&] { opkit::ops::sha256(data, 50, std::span<std::uint8_t>(odd), kHostCpu); }, "multiple of 32");
  expect_invalid([&] { opkit::ops::sha256(data, 30, std::span<std::uint8_t>(digests), kHostCpu); }, "messages of 30");
  std::vector<std::uint64_t> backwards{0, 50, 40};
  expect_invalid([&] { opkit::ops::sha256(data, backwards, std::span<std::uint8_t>(digests), kHostCpu); }, "message 1");
  std::vector<std::uint64_t> past_end{0, 50, 101};
  expect_invalid([&] { opkit::ops::sha256(data, past_end, std::span<std::uint8_t>(digests), kHostCpu); },
                 "past the end");
  std::vector<std::uint64_t> too_few{0, 50};
  expect_invalid([&] { opkit::ops::sha256(data, too_few, std::span<std::uint8_t>(digests), kHostCpu); },
                 "need 3 offsets");
}

}  // namespace
