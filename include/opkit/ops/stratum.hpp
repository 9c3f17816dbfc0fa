// Stratum V1 work: from a pool's job (the fields of mining.notify, plus the extranonce that
// mining.subscribe gave the connection) to the 80-byte block headers a miner searches, and from a
// pool's difficulty to the share target. No networking here: the CLI's client (tools/opkit) and
// `opkit mine --job` both build their headers with these functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opkit/ops/pow.hpp"

namespace opkit::ops {

// mining.notify's params, decoded. The 32-bit fields hold their values: Stratum sends them as 8
// hex digits, most significant first, and the header stores them little-endian.
struct StratumJob {
  std::string job_id;
  // As Stratum sends it: the header's 32 bytes with each 4-byte word byte-reversed (see
  // header_prevhash).
  std::array<std::uint8_t, 32> prevhash{};
  std::vector<std::uint8_t> coinb1, coinb2;  // the coinbase transaction around the extranonces
  std::vector<Sha256Digest> merkle_branch;   // each as sent: the bytes that are hashed
  std::uint32_t version = 0, nbits = 0, ntime = 0;
  bool clean_jobs = false;  // shares of earlier jobs are stale from now on
};

// What mining.subscribe gave the connection.
struct Extranonce {
  std::vector<std::uint8_t> extranonce1;
  std::size_t extranonce2_size = 0;  // bytes the miner chooses; 1..32
};

// The previous block's hash as the header stores it. Stratum sends the header's bytes with each
// 4-byte word byte-reversed (pools byte-swap the words of getblocktemplate's previousblockhash),
// which is the explorer-order hash with its eight words in reverse order.
std::array<std::uint8_t, 32> header_prevhash(const std::array<std::uint8_t, 32>& stratum_prevhash);

// coinb1 || extranonce1 || extranonce2 || coinb2.
std::vector<std::uint8_t> coinbase_transaction(const StratumJob& job, std::span<const std::uint8_t> extranonce1,
                                               std::span<const std::uint8_t> extranonce2);

// sha256d up the branch: root = sha256d(root || branch[i]), from sha256d(coinbase).
Sha256Digest merkle_root(std::span<const std::uint8_t> coinbase, std::span<const Sha256Digest> branch);

// The header for one extranonce2 and ntime, nonce 0. Throws Error(invalid_argument) when
// extranonce2 is not `extranonce.extranonce2_size` bytes.
BlockHeader stratum_header(const StratumJob& job, const Extranonce& extranonce,
                           std::span<const std::uint8_t> extranonce2, std::uint32_t ntime);

// The next extranonce2, counting it as a little-endian number (as cpuminer and cgminer do); false
// when it wrapped round to zero, i.e. every value of its size was used once from zero.
bool next_extranonce2(std::span<std::uint8_t> extranonce2);

// The share target of a pool difficulty: the difficulty-1 target (0x00000000ffff0000...0000)
// divided by `difficulty`, rounded down, exact for any double (fractional difficulties too);
// 2^256 - 1 when the quotient does not fit. Throws Error(invalid_argument) unless difficulty is
// finite and > 0, or when the quotient is zero (a difficulty above 2^224).
Target share_target(double difficulty);

// A 32-bit field as Stratum writes it (version, nbits, ntime, and mining.submit's ntime and nonce):
// 8 lower-case hex digits, most significant first.
std::string stratum_hex32(std::uint32_t value);
// Its inverse; Error(invalid_argument) naming `what` unless `text` is exactly 8 hex digits.
std::uint32_t parse_stratum_hex32(std::string_view text, std::string_view what);

}  // namespace opkit::ops
