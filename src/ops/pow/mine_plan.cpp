// Job validation and host precomputation (see mine_plan.hpp).
#include "mine_plan.hpp"

#include <limits>

#include "opkit/error.hpp"

namespace opkit::ops::detail {
namespace {

constexpr std::uint64_t last_bitcoin_nonce = 0xffffffffull;
constexpr std::uint64_t last_data_nonce = std::numeric_limits<std::uint64_t>::max();

// [start, start + count) inside [0, max_nonce], as an inclusive range.
void set_range(MinePlan& plan, std::uint64_t start, const std::optional<std::uint64_t>& count, std::uint64_t max_nonce,
               const char* scheme) {
  const std::string stage = std::string("mine (") + scheme + ")";
  if (start > max_nonce)
    throw Error(Errc::invalid_argument, stage,
                "start nonce " + std::to_string(start) + " is past the last nonce " + std::to_string(max_nonce));
  if (count && *count == 0) throw Error(Errc::invalid_argument, stage, "count must be at least 1");
  if (count && *count - 1 > max_nonce - start)
    throw Error(Errc::invalid_argument, stage,
                "the range [" + std::to_string(start) + ", +" + std::to_string(*count) + ") passes the last nonce " +
                    std::to_string(max_nonce));
  plan.first = start;
  plan.last = count ? start + (*count - 1) : max_nonce;
}

}  // namespace

MinePlan make_plan(const BitcoinJob& job) {
  MinePlan plan;
  plan.scheme = PowScheme::bitcoin;
  plan.target = job.target ? *job.target : Target::from_compact(job.header.nbits());
  set_range(plan, job.start, job.count, last_bitcoin_nonce, "bitcoin");
  plan.header = job.header;
  plan.midstate = sha256_iv;
  best_sha256_compress()(plan.midstate.data(), job.header.bytes.data());
  for (int i = 0; i < 3; ++i) plan.header_tail[i] = load_be32(job.header.bytes.data() + 64 + 4 * i);
  return plan;
}

MinePlan make_plan(const DataJob& job) {
  MinePlan plan;
  plan.scheme = PowScheme::data;
  plan.target = Target::from_leading_zero_bits(job.difficulty_bits);
  set_range(plan, job.start, job.count, last_data_nonce, "data");
  plan.data = job.data;
  plan.midstate = sha256_iv;
  const std::size_t whole = job.data.size() / 64 * 64;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(job.data.data());
  for (std::size_t at = 0; at < whole; at += 64) best_sha256_compress()(plan.midstate.data(), bytes + at);
  plan.prefix = job.data.substr(whole);
  return plan;
}

Sha256Digest MinePlan::hash(std::uint64_t nonce) const {
  return scheme == PowScheme::bitcoin ? bitcoin_hash(header, static_cast<std::uint32_t>(nonce))
                                      : data_hash(data, nonce);
}

bool MinePlan::meets(const Sha256Digest& digest) const {
  return scheme == PowScheme::bitcoin ? bitcoin_meets(digest, target) : data_meets(digest, target);
}

std::string MinePlan::hash_hex(const Sha256Digest& digest) const {
  return scheme == PowScheme::bitcoin ? bitcoin_hash_hex(digest) : data_hash_hex(digest);
}

int decimal_digits(std::uint64_t n) {
  int digits = 1;
  while (n >= 10) {
    n /= 10;
    ++digits;
  }
  return digits;
}

std::uint64_t power_of_ten(int k) {
  std::uint64_t p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

}  // namespace opkit::ops::detail

namespace opkit::ops {

NonceRange nonce_range(const BitcoinJob& job) {
  const detail::MinePlan plan = detail::make_plan(job);
  return {plan.first, plan.last};
}

NonceRange nonce_range(const DataJob& job) {
  const detail::MinePlan plan = detail::make_plan(job);
  return {plan.first, plan.last};
}

}  // namespace opkit::ops
