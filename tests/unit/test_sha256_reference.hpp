// Test support for the SHA-256 operators: an independent one-shot OpenSSL reference, random
// batches with unaligned offsets, and digest formatting for failure messages.
#pragma once

#include <openssl/evp.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "opkit/ops/sha256.hpp"

namespace opkit::test {

inline ops::Sha256Digest reference_sha256(std::span<const std::uint8_t> message, ops::HashAlgo algo) {
  ops::Sha256Digest out{};
  unsigned int size = 0;
  EVP_Digest(message.data(), message.size(), out.data(), &size, EVP_sha256(), nullptr);
  if (algo == ops::HashAlgo::sha256d) {
    ops::Sha256Digest first = out;
    EVP_Digest(first.data(), first.size(), out.data(), &size, EVP_sha256(), nullptr);
  }
  return out;
}

inline std::string hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

inline std::vector<std::uint8_t> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  return bytes;
}

// A variable-length batch: messages of the given lengths at unaligned offsets with random gaps,
// and offsets[0] > 0, so that the kernel's unaligned loads are exercised.
struct VariableBatch {
  std::vector<std::uint8_t> data;
  std::vector<std::uint64_t> offsets;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // [start, stop) of each message
};

inline VariableBatch make_variable_batch(std::mt19937_64& rng, const std::vector<std::size_t>& lengths) {
  VariableBatch batch;
  std::size_t total = 3;
  for (std::size_t len : lengths) total += len;
  batch.data = random_bytes(rng, total + 3);
  // Consecutive messages (offsets[i + 1] is where message i ends and i + 1 starts), shifted by 3.
  std::uint64_t at = 3;
  batch.offsets.push_back(at);
  for (std::size_t len : lengths) {
    batch.ranges.emplace_back(at, at + len);
    at += len;
    batch.offsets.push_back(at);
  }
  return batch;
}

// Checks digests against the reference for each message; returns "" or the first mismatch.
inline std::string first_mismatch(std::span<const std::uint8_t> digests,
                                  const std::vector<std::span<const std::uint8_t>>& messages, ops::HashAlgo algo) {
  if (digests.size() != messages.size() * 32) return "wrong digest buffer size";
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto expected = reference_sha256(messages[i], algo);
    auto got = digests.subspan(i * 32, 32);
    if (!std::equal(got.begin(), got.end(), expected.begin()))
      return "message " + std::to_string(i) + " (" + std::to_string(messages[i].size()) + " bytes): got " + hex(got) +
             ", want " + hex(expected);
  }
  return "";
}

inline std::vector<std::span<const std::uint8_t>> fixed_messages(std::span<const std::uint8_t> data,
                                                                 std::size_t message_bytes, std::size_t count) {
  std::vector<std::span<const std::uint8_t>> messages;
  for (std::size_t i = 0; i < count; ++i) messages.push_back(data.subspan(i * message_bytes, message_bytes));
  return messages;
}

inline std::vector<std::span<const std::uint8_t>> variable_messages(const VariableBatch& batch) {
  std::vector<std::span<const std::uint8_t>> messages;
  for (auto [start, stop] : batch.ranges)
    messages.push_back(std::span<const std::uint8_t>(batch.data).subspan(start, stop - start));
  return messages;
}

}  // namespace opkit::test
