// The AES kernel source (bitsliced AES-CTR, GCM) run on the CPU backend: NIST vectors, OpenSSL
// differentials over lengths 0..300 and MiB sizes, counter carries, GCM's inc32 wrap, batches,
// and argument checks. The GPU runs the same checks in tests/gpu/test_aes_gpu.cpp.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <numeric>

#include "opkit/error.hpp"
#include "ops/cipher/aes_kernels.hpp"
#include "ops/cipher/kernels/aes_state.cuh"
#include "unit/test_aes_batch_edges.hpp"
#include "unit/test_aes_reference.hpp"

namespace {

using namespace opkit::test::aes;
using opkit::Device;

// `device` is the name being declared, which parentheses would not allow:
// NOLINTBEGIN(bugprone-macro-parentheses)
#define OPKIT_CPU_DEVICE(device)                       \
  std::optional<Device> device##_holder;               \
  try {                                                \
    device##_holder = Device::cpu();                   \
  } catch (const opkit::Error& e) {                    \
    GTEST_SKIP() << "no CPU backend: " << e.message(); \
  }                                                    \
  const Device& device = *device##_holder
// NOLINTEND(bugprone-macro-parentheses)

std::vector<std::size_t> lengths_up_to(std::size_t n) {
  std::vector<std::size_t> v(n + 1);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(AesKernels, CtrMatchesSp80038aVectorsOnCpuBackend) {
  OPKIT_CPU_DEVICE(cpu);
  check_ctr_vectors(cpu);
}

TEST(AesKernels, GcmMatchesPublishedVectorsWithTruncatedAndFailingTagsOnCpuBackend) {
  OPKIT_CPU_DEVICE(cpu);
  check_gcm_vectors(cpu);
}

TEST(AesKernels, CtrAndGcmMatchOpenSslForLengths0To300OnCpuBackend) {
  OPKIT_CPU_DEVICE(cpu);
  check_against_openssl(cpu, lengths_up_to(300), 1);
}

TEST(AesKernels, CtrAndGcmMatchOpenSslOnMiBMessagesOnCpuBackend) {
  OPKIT_CPU_DEVICE(cpu);
  check_against_openssl(cpu, {(1u << 20) + 5, 3u << 20}, 2);
}

TEST(AesKernels, CtrCounterCarriesAcross2To32And2To64AndWrapsAt2To128) {
  OPKIT_CPU_DEVICE(cpu);
  check_ctr_carries(cpu, 40000);
}

// ---- GCM's inc32 wrap: an IV chosen (via its GHASH) so that J0 ends in 0xfffffff0 -------------

struct Gf {                      // GCM bit order: x^0 is the top bit of byte 0
  std::uint64_t hi = 0, lo = 0;  // bytes 0..7, 8..15 big-endian
};
Gf gf_load(const std::uint8_t* b) {
  Gf r;
  for (int i = 0; i < 8; ++i) r.hi = (r.hi << 8) | b[i];
  for (int i = 8; i < 16; ++i) r.lo = (r.lo << 8) | b[i];
  return r;
}
Gf gf_mul(Gf x, Gf y) {  // SP 800-38D algorithm 1 (test reference, not constant-time)
  Gf z, v = y;
  for (int i = 0; i < 128; ++i) {
    const bool bit = i < 64 ? (x.hi >> (63 - i)) & 1 : (x.lo >> (127 - i)) & 1;
    if (bit) z.hi ^= v.hi, z.lo ^= v.lo;
    const bool carry = v.lo & 1;
    v.lo = (v.lo >> 1) | (v.hi << 63);
    v.hi >>= 1;
    if (carry) v.hi ^= 0xe100000000000000ull;
  }
  return z;
}
Gf gf_inverse(Gf x) {  // x^(2^128 - 2)
  Gf result{0x8000000000000000ull, 0}, power = x;
  for (int i = 1; i < 128; ++i) {
    power = gf_mul(power, power);  // x^(2^i)
    result = gf_mul(result, power);
  }
  return result;
}

TEST(AesKernels, GcmCounterWrapsModulo2To32AsInc32) {
  OPKIT_CPU_DEVICE(cpu);
  std::mt19937_64 rng(5);
  const Bytes key = random_bytes(rng, 16);
  // H = E_K(0); for a 16-byte IV, J0 = ((IV . H) ^ L) . H with L = [0]_64 || [128]_64.
  Bytes h_bytes(16), zero(16, 0);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, key.data(), nullptr);
  EVP_EncryptUpdate(ctx, h_bytes.data(), &n, zero.data(), 16);
  EVP_CIPHER_CTX_free(ctx);
  const Gf h = gf_load(h_bytes.data()), h_inv = gf_inverse(h);
  Bytes j0 = random_bytes(rng, 16);
  j0[12] = j0[13] = j0[14] = 0xff;
  j0[15] = 0xf0;  // 16 blocks before the 32-bit counter wraps
  Gf t = gf_mul(gf_load(j0.data()), h_inv);
  t.lo ^= 128;
  const Gf iv_gf = gf_mul(t, h_inv);
  Bytes iv(16);
  for (int i = 0; i < 8; ++i) iv[i] = static_cast<std::uint8_t>(iv_gf.hi >> (56 - 8 * i));
  for (int i = 0; i < 8; ++i) iv[8 + i] = static_cast<std::uint8_t>(iv_gf.lo >> (56 - 8 * i));
  const Bytes pt = random_bytes(rng, 40 * 16 + 3), aad = random_bytes(rng, 20);
  const Bytes want = openssl_gcm_seal(key, iv, aad, pt);
  const Sealed s = device_gcm_seal(cpu, key, iv, aad, pt);
  EXPECT_EQ(s.ciphertext, Bytes(want.begin(), want.end() - 16));
  EXPECT_EQ(s.tag, Bytes(want.end() - 16, want.end()));
  // Had the carry run into bit 32, the blocks after the wrap would differ from plain CTR-128 ...
  Bytes ctr128 = j0;
  ctr128[15] += 1;
  EXPECT_NE(openssl_ctr(key, ctr128, pt), s.ciphertext) << "the test's IV does not reach the wrap";
}

TEST(AesKernels, BatchOfFixedLengthMessagesMatchesOpenSslAndReportsFailingTags) {
  OPKIT_CPU_DEVICE(cpu);
  check_batch(cpu, 23, false, 1500, 16, 12, 7);
  check_batch(cpu, 11, false, 0, 32, 12, 8);
}

TEST(AesKernels, BatchOfVariableLengthMessagesWithOwnAadAndLongIvsMatchesOpenSsl) {
  OPKIT_CPU_DEVICE(cpu);
  check_batch(cpu, 40, true, 0, 24, 12, 9);
  check_batch(cpu, 17, true, 0, 32, 20, 10);
}

// Lengths 0, 1, 15, 16, 17, 511, 512, 513 and 1500, fixed and mixed, 260 messages a batch (units
// over three blocks and more), in and out aligned, unaligned in place, or in different phases;
// GCM opens with failing tags: the staged IO (aes_ctr_batch) and the direct one (aes_ctr).
TEST(AesKernels, BatchesAtEdgeLengthsAndPlacementsMatchOpenSslThroughBothIos) {
  OPKIT_CPU_DEVICE(cpu);
  check_batch_edges(cpu, 260, 31);
}

// ---- Argument checks -----------------------------------------------------------------------------

template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

// The Horner GHASH kernel's skip range, which on a GPU leaves a message's whole data blocks to the
// tensor cores: with stream blocks [skip_begin, skip_end) skipped it adds what the same stream
// adds with those blocks zero (a chunk's run of them is one multiplication by a power of H).
// Runs aes_setup and aes_ghash directly at the tensor cores' chunk of 512 blocks: runs that start
// and end inside chunks, cover whole chunks, and a run that ends at the data's last whole block.
TEST(AesKernels, GhashSkipsARunOfBlocksAsIfTheyWereZeroOnCpuBackend) {
  OPKIT_CPU_DEVICE(cpu);
  const opkit::ops::aes::AesKernels k = opkit::ops::aes::aes_kernels(cpu);
  std::mt19937_64 rng(41);
  const Bytes key = random_bytes(rng, 16), iv = random_bytes(rng, 12), aad = random_bytes(rng, 37);
  const Bytes data = random_bytes(rng, 3000 * 16 + 9);
  constexpr unsigned long long chunk = 512;
  const unsigned long long aad_blocks = 3, whole = data.size() / 16, n = aad_blocks + whole + 2;
  const unsigned long long chunks = (n + chunk - 1) / chunk;
  auto ghash = [&](const Bytes& message, unsigned long long skip_begin, unsigned long long skip_end) {
    auto state = cpu.alloc<AesState>(1);
    auto powers = cpu.alloc<AesGf128>(AES_GHASH_POWERS);
    auto key_iv = cpu.alloc<std::uint8_t>(key.size() + iv.size()), aad_bytes = cpu.alloc<std::uint8_t>(aad.size());
    auto bytes = cpu.alloc<std::uint8_t>(message.size());
    Bytes packed = key;
    packed.insert(packed.end(), iv.begin(), iv.end());
    key_iv.copy_from(std::span<const std::uint8_t>(packed));
    aad_bytes.copy_from(std::span<const std::uint8_t>(aad));
    bytes.copy_from(std::span<const std::uint8_t>(message));
    const std::uint8_t* kiv = key_iv.data();
    k.setup.launch({.grid = 1, .block = 1}, state.data(), kiv, 16u, kiv + 16, 12u, 1u /* GCM */, 1ull, chunk,
                   static_cast<std::uint32_t*>(nullptr), powers.data());
    const auto* none = static_cast<const unsigned long long*>(nullptr);
    k.ghash.launch({.grid = static_cast<std::uint32_t>((chunks + 127) / 128), .block = 128}, state.data(),
                   static_cast<const std::uint8_t*>(aad_bytes.data()), none,
                   static_cast<unsigned long long>(aad.size()), static_cast<const std::uint8_t*>(bytes.data()), none,
                   static_cast<unsigned long long>(message.size()), 1ull, chunks, chunk,
                   static_cast<const AesGf128*>(powers.data()), skip_begin, skip_end);
    const AesGf128 sum = state.to_host()[0].ghash;
    return std::make_pair(sum.lo, sum.hi);
  };
  for (const auto& [first, last] : std::vector<std::pair<unsigned long long, unsigned long long>>{
           {0, whole}, {100, 1300}, {600, 1024}, {1, 2}, {2047, whole}}) {
    Bytes zeroed = data;
    std::fill(zeroed.begin() + static_cast<std::ptrdiff_t>(16 * first),
              zeroed.begin() + static_cast<std::ptrdiff_t>(16 * last), std::uint8_t{0});
    EXPECT_EQ(ghash(data, aad_blocks + first, aad_blocks + last), ghash(zeroed, 0, 0))
        << "data blocks " << first << " .. " << last << " skipped";
  }
  EXPECT_NE(ghash(data, 0, 0), ghash(data, aad_blocks + 100, aad_blocks + 1300));  // the skip is not a no-op
}

TEST(AesKernels, BadKeyIvTagSizesAndOverlapsAreInvalidArgumentsThatNeverShowTheKey) {
  OPKIT_CPU_DEVICE(cpu);
  namespace aes = opkit::ops::aes;
  const Bytes key15(15, 0xab), key(16, 0xcd), iv(12, 1), ctr(16, 2);
  auto buf = cpu.alloc<std::uint8_t>(64);
  auto tag = cpu.alloc<std::uint8_t>(16);
  auto tag11 = cpu.alloc<std::uint8_t>(11);
  auto none = cpu.alloc<std::uint8_t>(0);
  auto v = buf.view();
  const std::span<const std::uint8_t, 16> counter(ctr.data(), 16);
  std::vector<std::string> messages = {
      invalid_argument_message([&] { aes::aes_ctr_xor(cpu, key15, counter, v.subview(0, 32), v.subview(32, 32)); }),
      invalid_argument_message([&] { aes::aes_ctr_xor(cpu, key, counter, v.subview(0, 32), v.subview(16, 32)); }),
      invalid_argument_message([&] { aes::aes_ctr_xor(cpu, key, counter, v.subview(0, 32), v.subview(32, 31)); }),
      invalid_argument_message([&] {
        aes::aes_gcm_seal(cpu, key, std::span<const std::uint8_t>(), none, v.subview(0, 8), v.subview(8, 8), tag);
      }),
      invalid_argument_message([&] { aes::aes_gcm_seal(cpu, key, iv, none, v.subview(0, 8), v.subview(8, 8), tag11); }),
      invalid_argument_message(
          [&] { (void)aes::aes_gcm_open(cpu, key15, iv, none, v.subview(0, 8), v.subview(8, 8), tag); }),
  };
  for (const std::string& m : messages) {
    EXPECT_EQ(m.find("abab"), std::string::npos) << m;
    EXPECT_EQ(m.find("cdcd"), std::string::npos) << m;
    EXPECT_NE(m.find("aes"), std::string::npos) << m;
  }
  EXPECT_NE(messages[0].find("16, 24 or 32"), std::string::npos);
  EXPECT_NE(messages[1].find("overlap"), std::string::npos);
  EXPECT_NE(messages[3].find("at least 1 byte"), std::string::npos);
  EXPECT_NE(messages[4].find("tag"), std::string::npos);
}

}  // namespace
