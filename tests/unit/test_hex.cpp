// opkit's hex codec (opkit/hex.hpp): random bytes against an independent encoder, round trips in
// both cases, and hostile text (wrong length, non-hex characters) rejected naming the problem.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

std::mt19937_64 fresh_rng() {
  std::random_device device;
  return std::mt19937_64((std::uint64_t{device()} << 32) | device());
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

TEST(Hex, RandomBytesEncodeAsTheReferenceAndParseBackInEitherCase) {
  auto rng = fresh_rng();
  for (std::size_t n : {0, 1, 31, 32, 80, 1000}) {
    const std::vector<std::uint8_t> bytes = opkit::test::random_bytes(rng, n);
    const std::string text = opkit::to_hex(bytes);
    EXPECT_EQ(text, opkit::test::hex(bytes));
    EXPECT_EQ(opkit::parse_hex(text, n, "bytes"), bytes);
    EXPECT_EQ(opkit::parse_hex(upper(text), n, "bytes"), bytes);
    std::string buffer(2 * n + 1, '#');
    EXPECT_EQ(opkit::write_hex(bytes, buffer.data()), buffer.data() + 2 * n);
    EXPECT_EQ(buffer, text + "#");  // nothing written past the end
  }
}

TEST(Hex, WrongLengthAndNonHexCharactersAreRejectedNamingTheInput) {
  try {
    opkit::parse_hex("abc", 2, "target");
    FAIL() << "odd length accepted";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("target must be 4 hex digits (2 bytes), got 3 characters"), std::string::npos)
        << e.what();
  }
  try {
    opkit::parse_hex("00g0", 2, "block header");
    FAIL() << "non-hex character accepted";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("block header has a non-hex character 'g' at position 2"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(opkit::parse_hex("0x00", 2, "x"), opkit::Error);
  EXPECT_THROW(opkit::parse_hex(" 000", 2, "x"), opkit::Error);
  EXPECT_THROW(opkit::parse_hex(std::string("00\0"
                                            "0",
                                            4),
                                2, "x"),
               opkit::Error);
}

}  // namespace
