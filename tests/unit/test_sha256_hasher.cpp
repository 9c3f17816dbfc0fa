// Sha256Hasher, opkit's one OpenSSL entry point: messages given whole or in random pieces,
// reuse after finish(), against an independent one-shot OpenSSL reference on fresh random input.
#include <gtest/gtest.h>

#include <random>
#include <string_view>

#include "opkit/sha256_hasher.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

using opkit::Sha256Digest;
using opkit::Sha256Hasher;
using opkit::ops::HashAlgo;
using namespace opkit::test;

std::mt19937_64 fresh_rng() {
  std::random_device device;
  return std::mt19937_64((std::uint64_t{device()} << 32) | device());
}

TEST(Sha256Hasher, KnownAnswersFromFips180) {
  Sha256Hasher hasher;
  EXPECT_EQ(hex(hasher.digest(std::string_view("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(hasher.digest(std::string_view(""))),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(hasher.update(std::string_view("abcdbcdecdefdefgefghfghighij"))
                    .update(std::string_view("hijkijkljklmklmnlmnomnopnopq"))
                    .finish()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Hasher, MessagesStreamedInRandomPiecesMatchOpenSsl) {
  auto rng = fresh_rng();
  Sha256Hasher hasher;  // one hasher for every message: finish() must start each one afresh
  for (std::size_t len : {0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 300, 4096, 1 << 20}) {
    const std::vector<std::uint8_t> message = random_bytes(rng, len);
    std::size_t at = 0;
    while (at < len) {
      const std::size_t piece = std::min<std::size_t>(len - at, rng() % 200);  // empty pieces too
      hasher.update(std::span(message).subspan(at, piece));
      at += piece;
    }
    EXPECT_EQ(hex(hasher.finish()), hex(reference_sha256(message, HashAlgo::sha256))) << len << " bytes";
  }
}

TEST(Sha256Hasher, FinishStartsANewMessageAndDigestIsUpdatePlusFinish) {
  auto rng = fresh_rng();
  const std::vector<std::uint8_t> a = random_bytes(rng, 1 + rng() % 300), b = random_bytes(rng, 1 + rng() % 300);
  Sha256Hasher hasher;
  hasher.update(a);
  EXPECT_EQ(hex(hasher.finish()), hex(reference_sha256(a, HashAlgo::sha256)));
  EXPECT_EQ(hex(hasher.digest(b)), hex(reference_sha256(b, HashAlgo::sha256)));
  // A digest of a digest is sha256d.
  EXPECT_EQ(hex(hasher.digest(hasher.digest(a))), hex(reference_sha256(a, HashAlgo::sha256d)));
  // A moved-to hasher carries on with the moved-from one's message.
  hasher.update(std::span(a).first(1));
  Sha256Hasher moved = std::move(hasher);
  moved.update(std::span(a).subspan(1));
  EXPECT_EQ(hex(moved.finish()), hex(reference_sha256(a, HashAlgo::sha256)));
}

}  // namespace
