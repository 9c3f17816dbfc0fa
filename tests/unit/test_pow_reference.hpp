// Shared by the proof-of-work tests: the real Bitcoin headers of tests/data, and brute-force
// reference searches written straight on OpenSSL (independent of the miners' SHA-256 code).
#pragma once

#include <openssl/sha.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "opkit/ops/pow.hpp"

namespace opkit::test {

struct RealHeader {
  int height = 0;
  ops::BlockHeader header;
  std::uint32_t nonce = 0;
  std::string hash;  // explorer order
};

inline std::vector<RealHeader> real_headers() {
  std::ifstream in(std::string(OPKIT_TEST_DATA_DIR) + "/bitcoin-headers.tsv");
  std::vector<RealHeader> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("height", 0) == 0) continue;
    std::istringstream fields(line);
    RealHeader h;
    std::string hex;
    fields >> h.height >> hex >> h.hash;
    h.header = ops::BlockHeader::from_hex(hex);
    h.nonce = h.header.nonce();
    out.push_back(h);
  }
  return out;
}

// The lowest nonce of [first, last] with sha256d(header) <= target (little-endian number).
inline std::optional<std::uint64_t> brute_force_bitcoin(ops::BlockHeader header, const ops::Target& target,
                                                        std::uint64_t first, std::uint64_t last) {
  for (std::uint64_t n = first;; ++n) {
    header.set_nonce(static_cast<std::uint32_t>(n));
    unsigned char once[32], twice[32];
    SHA256(header.bytes.data(), 80, once);
    SHA256(once, 32, twice);
    bool meets = true;
    for (int i = 0; i < 32; ++i) {
      if (twice[31 - i] != target.bytes[i]) {
        meets = twice[31 - i] < target.bytes[i];
        break;
      }
    }
    if (meets) return n;
    if (n == last) return std::nullopt;
  }
}

// The lowest nonce of [first, last] with sha256(data || decimal(n)) having `bits` leading zeros.
inline std::optional<std::uint64_t> brute_force_data(const std::string& data, int bits, std::uint64_t first,
                                                     std::uint64_t last) {
  for (std::uint64_t n = first;; ++n) {
    const std::string message = data + std::to_string(n);
    unsigned char d[32];
    SHA256(reinterpret_cast<const unsigned char*>(message.data()), message.size(), d);
    int zeros = 0;
    while (zeros < 256 && !(d[zeros / 8] & (0x80 >> (zeros % 8)))) ++zeros;
    if (zeros >= bits) return n;
    if (n == last) return std::nullopt;
  }
}

// The shape of random_data_job's jobs: difficulty min_bits..min_bits+4, a range of `count` nonces
// starting up to `below` under a power of ten. The defaults are the GPU tests'.
struct DataJobShape {
  int min_bits = 8;
  std::uint64_t below = 3000;
  std::uint64_t count = 20000;
};

// A random data-mode job for the randomized tests: a STRING of 0..149 bytes (zero, one or two
// 64-byte blocks before the nonce), and a range that starts just below a power of ten, so that
// the nonces' digit count changes inside it.
template <class Rng>
ops::DataJob random_data_job(Rng& rng, const DataJobShape& shape = {}) {
  ops::DataJob job;
  const std::size_t len = rng() % 150;
  for (std::size_t i = 0; i < len; ++i) job.data.push_back(static_cast<char>(rng()));
  job.difficulty_bits = shape.min_bits + static_cast<int>(rng() % 5);
  const int k = 1 + static_cast<int>(rng() % 19);
  std::uint64_t p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  job.start = p > shape.below ? p - rng() % shape.below : 0;
  job.count = shape.count;
  return job;
}

}  // namespace opkit::test
