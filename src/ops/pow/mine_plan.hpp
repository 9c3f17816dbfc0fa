// A validated mining job in the form the engines use: the inclusive nonce range, the target, and
// what the host precomputes once (midstates, constant message words).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "opkit/ops/pow.hpp"
#include "sha256/sha256_compress.hpp"

namespace opkit::ops::detail {

enum class PowScheme : std::uint8_t { bitcoin, data };

struct MinePlan {
  PowScheme scheme = PowScheme::bitcoin;
  Target target;
  std::uint64_t first = 0;  // the range [first, last], never empty
  std::uint64_t last = 0;

  // Both schemes: the state after the message's leading whole blocks that do not depend on the
  // nonce (Bitcoin: header bytes 0..63; data: the STRING's whole 64-byte blocks).
  Sha256State midstate{};

  // Bitcoin: the header, and its words 16..18 (big-endian), which open the second block.
  BlockHeader header;
  std::array<std::uint32_t, 3> header_tail{};

  // Data: the STRING, and its bytes after the whole blocks (0..63 of them).
  std::string data;
  std::string prefix;

  // The hash of this nonce, and whether it meets the target (OpenSSL, as a check of the engines).
  Sha256Digest hash(std::uint64_t nonce) const;
  bool meets(const Sha256Digest& digest) const;
  std::string hash_hex(const Sha256Digest& digest) const;
};

// Validates the job (range, target) and precomputes; throws Error(invalid_argument).
MinePlan make_plan(const BitcoinJob& job);
MinePlan make_plan(const DataJob& job);

// Decimal digits of n (1..20).
int decimal_digits(std::uint64_t n);
// 10^k for k in 0..19.
std::uint64_t power_of_ten(int k);

}  // namespace opkit::ops::detail
