// The 80-byte Bitcoin block header and the reference hashes of both schemes (OpenSSL, so that
// they check the miners' own SHA-256 code independently).
#include <algorithm>
#include <string>

#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/ops/sha256.hpp"

namespace opkit::ops {
namespace {

std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}

}  // namespace

BlockHeader BlockHeader::from_hex(std::string_view hex) {
  const auto raw = parse_hex(hex, 80, "block header");
  BlockHeader h;
  std::copy(raw.begin(), raw.end(), h.bytes.begin());
  return h;
}

std::string BlockHeader::hex() const {
  return to_hex(bytes);
}
std::uint32_t BlockHeader::version() const {
  return load_le32(bytes.data());
}
std::uint32_t BlockHeader::time() const {
  return load_le32(bytes.data() + 68);
}
std::uint32_t BlockHeader::nbits() const {
  return load_le32(bytes.data() + 72);
}
std::uint32_t BlockHeader::nonce() const {
  return load_le32(bytes.data() + 76);
}

void BlockHeader::set_nonce(std::uint32_t nonce) {
  for (int i = 0; i < 4; ++i) bytes[76 + i] = static_cast<std::uint8_t>(nonce >> (8 * i));
}

Sha256Digest bitcoin_hash(const BlockHeader& header, std::uint32_t nonce) {
  BlockHeader h = header;
  h.set_nonce(nonce);
  return sha256d(h.bytes);
}

Sha256Digest data_hash(std::string_view data, std::uint64_t nonce) {
  const std::string message = std::string(data) + std::to_string(nonce);
  return Sha256Hasher().digest(message);
}

std::string bitcoin_hash_hex(const Sha256Digest& digest) {
  Sha256Digest reversed;
  std::reverse_copy(digest.begin(), digest.end(), reversed.begin());
  return to_hex(reversed);
}

std::string data_hash_hex(const Sha256Digest& digest) {
  return to_hex(digest);
}

}  // namespace opkit::ops
