// Proof-of-work mining: the lowest nonce in a range whose SHA-256 meets a target, on every GPU (a
// kernel compiled per job) or on every CPU core. Two schemes:
//   Bitcoin  sha256d(80-byte block header with the nonce) <= target, the hash read little-endian;
//   data     sha256(STRING || decimal(nonce)) < 2^(256 - bits), the hash read big-endian.
// Ranges are [start, start + count) and the answer is always the LOWEST qualifying nonce, so the
// result does not depend on the devices used and ranges can be split across processes.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opkit/device.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/sha256_hasher.hpp"

namespace opkit::ops {

// A 256-bit unsigned number, most significant byte first; a hash qualifies when it is <= the target.
struct Target {
  std::array<std::uint8_t, 32> bytes{};

  // Bitcoin's compact form (nBits): mantissa * 256^(exponent - 3). Throws Error(invalid_argument)
  // for a negative mantissa (sign bit set), a value over 2^256 - 1, or a zero target.
  static Target from_compact(std::uint32_t nbits);
  // 64 hex digits, most significant first (as explorers print targets and hashes).
  static Target from_hex(std::string_view hex);
  // 2^(256 - bits) - 1: "the first `bits` bits are zero"; bits in 1..255.
  static Target from_leading_zero_bits(int bits);

  std::string hex() const;
  // The most significant 32 bits, which the GPU kernels test before the host checks all 256.
  std::uint32_t top_word() const;
  friend bool operator==(const Target&, const Target&) = default;
};

// The 80-byte Bitcoin block header as serialized (little-endian fields).
struct BlockHeader {
  std::array<std::uint8_t, 80> bytes{};

  // 160 hex digits. Throws Error(invalid_argument) naming what is wrong.
  static BlockHeader from_hex(std::string_view hex);
  std::string hex() const;

  std::uint32_t version() const;
  std::uint32_t time() const;
  std::uint32_t nbits() const;
  std::uint32_t nonce() const;
  void set_nonce(std::uint32_t nonce);
};

// sha256d of the header with this nonce.
Sha256Digest bitcoin_hash(const BlockHeader& header, std::uint32_t nonce);
// sha256(data || decimal(nonce)).
Sha256Digest data_hash(std::string_view data, std::uint64_t nonce);
// Whether the digest meets the target: Bitcoin reads the digest as a little-endian number, data
// mode as a big-endian one.
bool bitcoin_meets(const Sha256Digest& digest, const Target& target);
bool data_meets(const Sha256Digest& digest, const Target& target);
// Hex of the digest in explorer order (byte-reversed) for Bitcoin, plain for data mode.
std::string bitcoin_hash_hex(const Sha256Digest& digest);
std::string data_hash_hex(const Sha256Digest& digest);

struct BitcoinJob {
  BlockHeader header;            // its nonce field is ignored
  std::optional<Target> target;  // default: the header's nBits
  std::uint64_t start = 0;
  std::optional<std::uint64_t> count;  // default: up to the last 32-bit nonce
};

struct DataJob {
  std::string data;         // any length, any bytes
  int difficulty_bits = 0;  // 1..255
  std::uint64_t start = 0;
  std::optional<std::uint64_t> count;  // default: up to 2^64 - 1
};

// The nonces a job covers, first to last inclusive (never empty).
struct NonceRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
};

// Checks the job as mine() does (range within the scheme's nonces, target or difficulty) and
// returns its range; throws Error(invalid_argument). Lets a caller reject a job before it starts
// devices, and report the range it searches.
NonceRange nonce_range(const BitcoinJob& job);
NonceRange nonce_range(const DataJob& job);

struct MineProgress {
  std::uint64_t hashes = 0;  // nonces tested so far
  std::uint64_t total = 0;   // nonces in the range (saturates at 2^64 - 1)
  double seconds = 0;
  double rate = 0;  // hashes per second
};

struct MineOptions {
  // Devices that run the mining kernel (GPUs, or Device::cpu() to run the kernel source on the
  // CPU backend); Error(invalid_argument) for one whose backend mine_support() lacks. Empty:
  // every GPU of mine_support().gpus(), or the native CPU miner when there is none.
  std::vector<Device> devices;
  // Also mine with the native CPU code (SHA-NI where present; the "host" device of the CLI) on
  // `cpu_threads` cores (0: all). With no devices given, true means the host only.
  bool cpu = false;
  int cpu_threads = 0;
  // Checked between launches (each at most `launch_seconds`): setting it stops the search.
  // A search that ends by itself returns once the kernel compiles it started have finished (a
  // short search on a new job may wait a few seconds of NVRTC, which leaves the job's kernel in
  // the disk cache); a stopped one returns at once and leaves them running.
  const std::atomic<bool>* stop = nullptr;
  // Called on the calling thread about every `progress_seconds`.
  std::function<void(const MineProgress&)> progress;
  double progress_seconds = 0.25;
  double launch_seconds = 0.1;
};

struct MineResult {
  bool found = false;
  std::uint64_t nonce = 0;  // the lowest qualifying nonce of the range, when found
  Sha256Digest digest{};    // its hash
  std::string hash_hex;     // explorer order (Bitcoin) or plain hex (data)
  // Nonces searched, each once: the range's size when it was searched to the end (chunks run
  // whole, so it may pass the nonce found).
  std::uint64_t hashes = 0;
  // Nonces hashed a second time, not in `hashes`: only when a device launch had more candidates
  // (hashes whose top 32 bits pass) than its buffer holds, which real targets practically never
  // give (docs/mining.md).
  std::uint64_t rehashes = 0;
  double seconds = 0;
  // Stopped through MineOptions::stop before the answer was certain (found is then false).
  bool interrupted = false;
  // Every nonce of [start, searched_through] was tested (and none qualified, unless found);
  // empty when not even the first nonce was. Resume an interrupted search at searched_through + 1.
  std::optional<std::uint64_t> searched_through;
  std::vector<std::string> engines;  // what ran: device names, "cpu (16 threads, sha-ni)"
};

// Where the mining kernels run: every backend that compiles CUDA C++ (cuda, cpu, ...).
const KernelSupport& mine_support();

MineResult mine(const BitcoinJob& job, const MineOptions& options = {});
MineResult mine(const DataJob& job, const MineOptions& options = {});

}  // namespace opkit::ops
