// Stratum jobs to block headers (see opkit/ops/stratum.hpp).
#include <algorithm>
#include <cstdio>

#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "opkit/ops/sha256.hpp"
#include "opkit/ops/stratum.hpp"

namespace opkit::ops {
namespace {

void store_le32(std::uint8_t* out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

}  // namespace

std::array<std::uint8_t, 32> header_prevhash(const std::array<std::uint8_t, 32>& stratum_prevhash) {
  std::array<std::uint8_t, 32> header{};
  for (std::size_t word = 0; word < 8; ++word)
    std::reverse_copy(stratum_prevhash.begin() + 4 * word, stratum_prevhash.begin() + 4 * word + 4,
                      header.begin() + 4 * word);
  return header;
}

std::vector<std::uint8_t> coinbase_transaction(const StratumJob& job, std::span<const std::uint8_t> extranonce1,
                                               std::span<const std::uint8_t> extranonce2) {
  std::vector<std::uint8_t> tx;
  tx.reserve(job.coinb1.size() + extranonce1.size() + extranonce2.size() + job.coinb2.size());
  tx.insert(tx.end(), job.coinb1.begin(), job.coinb1.end());
  tx.insert(tx.end(), extranonce1.begin(), extranonce1.end());
  tx.insert(tx.end(), extranonce2.begin(), extranonce2.end());
  tx.insert(tx.end(), job.coinb2.begin(), job.coinb2.end());
  return tx;
}

Sha256Digest merkle_root(std::span<const std::uint8_t> coinbase, std::span<const Sha256Digest> branch) {
  Sha256Digest root = sha256d(coinbase);
  std::array<std::uint8_t, 64> pair{};
  for (const Sha256Digest& sibling : branch) {
    std::copy(root.begin(), root.end(), pair.begin());
    std::copy(sibling.begin(), sibling.end(), pair.begin() + 32);
    root = sha256d(pair);
  }
  return root;
}

BlockHeader stratum_header(const StratumJob& job, const Extranonce& extranonce,
                           std::span<const std::uint8_t> extranonce2, std::uint32_t ntime) {
  if (extranonce2.size() != extranonce.extranonce2_size)
    throw Error(Errc::invalid_argument, "stratum header",
                "extranonce2 must be " + std::to_string(extranonce.extranonce2_size) + " bytes, got " +
                    std::to_string(extranonce2.size()));
  const Sha256Digest root =
      merkle_root(coinbase_transaction(job, extranonce.extranonce1, extranonce2), job.merkle_branch);
  BlockHeader header;
  std::uint8_t* out = header.bytes.data();
  store_le32(out, job.version);
  const auto prev = header_prevhash(job.prevhash);
  std::copy(prev.begin(), prev.end(), out + 4);
  std::copy(root.begin(), root.end(), out + 36);
  store_le32(out + 68, ntime);
  store_le32(out + 72, job.nbits);
  store_le32(out + 76, 0);
  return header;
}

bool next_extranonce2(std::span<std::uint8_t> extranonce2) {
  for (std::uint8_t& byte : extranonce2)
    if (++byte != 0) return true;
  return false;
}

std::string stratum_hex32(std::uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

std::uint32_t parse_stratum_hex32(std::string_view text, std::string_view what) {
  const std::vector<std::uint8_t> raw = parse_hex(text, 4, what);
  return (std::uint32_t{raw[0]} << 24) | (std::uint32_t{raw[1]} << 16) | (std::uint32_t{raw[2]} << 8) | raw[3];
}

}  // namespace opkit::ops
