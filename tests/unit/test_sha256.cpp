// The SHA-256 one-message API against the FIPS 180 vectors, and the batch API's input checks.
// Batches on every target (host's OpenSSL path included): tests/conformance/test_sha256.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <string_view>

#include "opkit/error.hpp"
#include "opkit/ops/sha256.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

using opkit::ops::HashOptions;
using namespace opkit::test;

const HashOptions kHostCpu{.host_cpu = true};

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
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
