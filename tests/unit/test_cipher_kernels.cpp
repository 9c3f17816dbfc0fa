// The ChaCha20 / ChaCha20-Poly1305 kernel source on the CPU backend (the same CUDA C++ a GPU
// compiles): vectors, differential tests against OpenSSL EVP for bulk (lengths 0..300, several
// Poly1305 tree levels, unaligned buffers, in place) and batch, and tag failures.
#include <gtest/gtest.h>

#include <algorithm>

#include "opkit/module.hpp"
#include "unit/cipher_test_support.hpp"

namespace {

using namespace cipher_test;
using opkit::ops::Cipher;
namespace ops = opkit::ops;

#define CPU_BACKEND_OR_SKIP()                          \
  std::optional<opkit::Device> cpu_holder;             \
  try {                                                \
    cpu_holder = opkit::Device::cpu();                 \
  } catch (const opkit::Error& e) {                    \
    GTEST_SKIP() << "no CPU backend: " << e.message(); \
  }                                                    \
  const opkit::Device& cpu = *cpu_holder

bool all_zero(const Bytes& b) {
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

TEST(CipherKernels, Rfc8439VectorsOnTheCpuBackend) {
  CPU_BACKEND_OR_SKIP();
  for (const Vector& v : load_vectors()) {
    if (v.cipher != "chacha20" && v.cipher != "chacha20-poly1305") continue;
    SCOPED_TRACE("cipher-vectors.txt line " + std::to_string(v.line));
    const Cipher c = *ops::cipher_from_name(v.cipher);
    Bytes out(v.ciphertext.size(), 0xaa), tag(v.tag.size());
    if (v.fail) {
      EXPECT_THROW(ops::decrypt(c, {v.key, v.iv, v.aad}, v.ciphertext, out, v.tag, {.device = cpu}),
                   ops::AuthenticationError);
      EXPECT_TRUE(all_zero(out));
      continue;
    }
    ops::encrypt(c, {v.key, v.iv, v.aad}, v.plaintext, out, tag, {.device = cpu});
    EXPECT_EQ(out, v.ciphertext);
    EXPECT_EQ(tag, v.tag);
    ops::decrypt(c, {v.key, v.iv, v.aad}, v.ciphertext, out, v.tag, {.device = cpu});
    EXPECT_EQ(out, v.plaintext);
  }
}

// Encrypts with the kernels from data at offset `shift` of a buffer (shift 1: byte loads).
void check_bulk(const opkit::Device& cpu, Cipher c, std::size_t n, std::size_t shift, bool in_place) {
  const bool aead = ops::cipher_traits(c).aead;
  const Bytes key = random_bytes(32), iv = random_iv(c), aad = aead ? random_bytes(random_below(50)) : Bytes{};
  const Bytes plain = random_bytes(n);
  const Sealed want = reference_encrypt(c, key, iv, aad, plain);
  Bytes in(n + shift + 16), out(n + shift + 16), tag(want.tag.size());
  std::copy(plain.begin(), plain.end(), in.begin() + static_cast<std::ptrdiff_t>(shift));
  const std::span<std::uint8_t> src(in.data() + shift, n), dst(in_place ? src : std::span(out.data() + shift, n));
  ops::encrypt(c, {key, iv, aad}, src, dst, tag, {.device = cpu});
  ASSERT_TRUE(std::equal(dst.begin(), dst.end(), want.data.begin())) << "n=" << n << " shift=" << shift;
  ASSERT_EQ(tag, want.tag) << "n=" << n;
  Bytes back(n);
  ops::decrypt(c, {key, iv, aad}, dst, back, want.tag, {.device = cpu});
  ASSERT_EQ(back, plain) << "n=" << n;
}

TEST(CipherKernels, BulkMatchesOpenSslForLengthsUpTo300AlignedOrNotInPlaceOrNot) {
  CPU_BACKEND_OR_SKIP();
  for (Cipher c : {Cipher::chacha20, Cipher::chacha20_poly1305})
    for (std::size_t n = 0; n <= 300; n += 1 + random_below(5)) check_bulk(cpu, c, n, n % 2, n % 3 == 0);
}

TEST(CipherKernels, BulkPoly1305TreeOverManyBlocksAndGroupsMatchesOpenSsl) {
  CPU_BACKEND_OR_SKIP();
  // 256-byte pieces, 256 per group: 1 group + a tail; 16 groups; 300 groups (two partials per
  // thread in the finish kernel), each with a short last piece.
  for (std::size_t n : {std::size_t{256 * 256 + 1}, std::size_t{(1u << 20) + 17}, std::size_t{300u * 65536 + 100}}) {
    check_bulk(cpu, Cipher::chacha20_poly1305, n, 0, false);
    check_bulk(cpu, Cipher::chacha20_poly1305, n, 3, true);
  }
  check_bulk(cpu, Cipher::chacha20, (3u << 20) + 5, 0, true);
}

TEST(CipherKernels, BulkFlippedBitsFailVerificationAndZeroTheOutput) {
  CPU_BACKEND_OR_SKIP();
  const Bytes key = random_bytes(32), iv = random_bytes(12), aad = random_bytes(13), plain = random_bytes(70000);
  const Sealed sealed = reference_encrypt(Cipher::chacha20_poly1305, key, iv, aad, plain);
  for (int what = 0; what < 3; ++what) {
    Bytes ct = sealed.data, tag = sealed.tag, a = aad;
    Bytes& target = what == 0 ? ct : (what == 1 ? tag : a);
    target[random_below(target.size())] ^= static_cast<std::uint8_t>(1u << random_below(8));
    EXPECT_THROW(ops::decrypt(Cipher::chacha20_poly1305, {key, iv, a}, ct, ct, tag, {.device = cpu}),
                 ops::AuthenticationError);
    EXPECT_TRUE(all_zero(ct)) << "in-place decryption left plaintext or ciphertext behind";
  }
}

TEST(CipherKernels, BatchesMatchOpenSslAndReportForgedIndices) {
  CPU_BACKEND_OR_SKIP();
  for (Cipher c : {Cipher::chacha20, Cipher::chacha20_poly1305}) {
    for (int layout = 0; layout < 3; ++layout) {  // variable, fixed 1..200 bytes, fixed 64 bytes (aligned loads)
      SCOPED_TRACE(std::string(ops::cipher_traits(c).name) + " layout " + std::to_string(layout));
      const bool aead = ops::cipher_traits(c).aead;
      const std::size_t count = 50;
      const std::size_t fixed_len = layout == 2 ? 64 : 1 + random_below(200);
      Bytes data, keys, ivs, aad, sealed, tags;
      std::vector<std::uint64_t> offsets{0}, aad_offsets{0};
      for (std::size_t i = 0; i < count; ++i) {
        const Bytes key = random_bytes(32), iv = random_iv(c), a = aead ? random_bytes(random_below(40)) : Bytes{};
        const Bytes m = random_bytes(layout == 0 ? random_below(300) : fixed_len);
        const Sealed s = reference_encrypt(c, key, iv, a, m);
        keys.insert(keys.end(), key.begin(), key.end());
        ivs.insert(ivs.end(), iv.begin(), iv.end());
        aad.insert(aad.end(), a.begin(), a.end());
        data.insert(data.end(), m.begin(), m.end());
        sealed.insert(sealed.end(), s.data.begin(), s.data.end());
        tags.insert(tags.end(), s.tag.begin(), s.tag.end());
        offsets.push_back(data.size());
        aad_offsets.push_back(aad.size());
      }
      ops::CipherBatch batch{.count = count,
                             .message_bytes = layout == 0 ? 0 : fixed_len,
                             .keys = keys,
                             .ivs = ivs,
                             .iv_bytes = aead ? 12u : 16u};
      if (layout == 0) batch.offsets = offsets;
      if (aead) batch.aad = aad, batch.aad_offsets = aad_offsets;
      Bytes out(data.size()), got_tags(tags.size());
      ops::encrypt_batch(c, batch, data, out, got_tags, {.device = cpu});
      EXPECT_EQ(out, sealed);
      EXPECT_EQ(got_tags, tags);
      Bytes back = out;
      ops::decrypt_batch(c, batch, back, back, tags, {.device = cpu});
      EXPECT_EQ(back, data);
      if (!aead) continue;
      Bytes forged = tags;
      forged[7 * 16 + 5] ^= 0x80;
      forged[49 * 16] ^= 1;
      back = out;
      try {
        ops::decrypt_batch(c, batch, back, back, forged, {.device = cpu});
        ADD_FAILURE() << "forged tags accepted";
      } catch (const ops::AuthenticationError& e) {
        EXPECT_EQ(e.failed_indices(), (std::vector<std::size_t>{7, 49}));
      }
      for (std::size_t i = 0; i < count; ++i)
        for (std::uint64_t k = offsets[i]; k < offsets[i + 1]; ++k)
          ASSERT_EQ(back[k], i == 7 || i == 49 ? 0 : data[k]) << "message " << i;
    }
  }
}

// Every cipher's batch kernels on messages at every alignment (cipher_io.cuh): 1500-byte messages
// back to back (one in four 16-byte aligned) and variable lengths around the AES 512-byte units,
// the 64-byte ChaCha20 blocks and the 16-byte chunks, in a buffer that starts 0, 3 or 12 bytes past
// an aligned address; in place, out of place in the same phase, and out of place in another phase
// (the byte-by-byte fallback); against OpenSSL, then decrypted back.
TEST(CipherKernels, BatchesAtEveryAlignmentMatchOpenSsl) {
  CPU_BACKEND_OR_SKIP();
  const std::size_t lengths[] = {0, 1, 15, 16, 17, 63, 64, 65, 500, 511, 512, 513, 527, 1023, 1025, 1500};
  for (Cipher c : ops::all_ciphers()) {
    const bool aead = ops::cipher_traits(c).aead;
    for (int layout = 0; layout < 2; ++layout) {  // fixed 1500 bytes, variable
      SCOPED_TRACE(std::string(ops::cipher_traits(c).name) + (layout == 0 ? " fixed" : " variable"));
      const std::size_t count = layout == 0 ? 9 : std::size(lengths) + 4;
      Bytes data, keys, ivs, aad, sealed, tags;
      std::vector<std::uint64_t> offsets{0}, aad_offsets{0};
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t n = layout == 0 ? 1500 : i < std::size(lengths) ? lengths[i] : random_below(1600);
        const Bytes key = random_bytes(ops::cipher_traits(c).key_bytes), iv = random_iv(c);
        const Bytes a = aead && layout == 1 ? random_bytes(random_below(40)) : Bytes{}, m = random_bytes(n);
        const Sealed ref = reference_encrypt(c, key, iv, a, m);
        keys.insert(keys.end(), key.begin(), key.end());
        ivs.insert(ivs.end(), iv.begin(), iv.end());
        aad.insert(aad.end(), a.begin(), a.end());
        data.insert(data.end(), m.begin(), m.end());
        sealed.insert(sealed.end(), ref.data.begin(), ref.data.end());
        tags.insert(tags.end(), ref.tag.begin(), ref.tag.end());
        offsets.push_back(data.size());
        aad_offsets.push_back(aad.size());
      }
      ops::CipherBatch batch{.count = count,
                             .message_bytes = layout == 0 ? 1500u : 0u,
                             .keys = keys,
                             .ivs = ivs,
                             .iv_bytes = aead ? 12u : 16u};
      if (layout == 1) batch.offsets = offsets;
      if (aead && layout == 1) batch.aad = aad, batch.aad_offsets = aad_offsets;
      for (std::size_t shift : {0u, 3u, 12u}) {
        for (int mode = 0; mode < 3; ++mode) {  // in place, same phase, another phase
          SCOPED_TRACE("buffer at 16 k + " + std::to_string(shift) + ", mode " + std::to_string(mode));
          Bytes in_store(data.size() + 48), out_store(data.size() + 48);
          const auto at = [&](Bytes& store, std::size_t phase) {
            const auto address = reinterpret_cast<std::uintptr_t>(store.data());
            return store.data() + ((16 - address % 16) % 16) + phase;
          };
          std::uint8_t* in = at(in_store, shift);
          std::uint8_t* out = mode == 0 ? in : at(out_store, mode == 1 ? shift : (shift + 5) % 16);
          std::copy(data.begin(), data.end(), in);
          Bytes got_tags(tags.size());
          ops::encrypt_batch(c, batch, std::span<const std::uint8_t>(in, data.size()),
                             std::span<std::uint8_t>(out, data.size()), got_tags, {.device = cpu});
          ASSERT_TRUE(std::equal(sealed.begin(), sealed.end(), out));
          ASSERT_EQ(got_tags, tags);
          ops::decrypt_batch(c, batch, std::span<const std::uint8_t>(out, data.size()),
                             std::span<std::uint8_t>(out, data.size()), tags, {.device = cpu});
          ASSERT_TRUE(std::equal(data.begin(), data.end(), out));
        }
      }
    }
  }
}

TEST(CipherKernels, Poly1305ArithmeticMatchesTheRfcVectorAndOpenSsl) {
  CPU_BACKEND_OR_SKIP();
  // Plain Poly1305 (last block padded with 0x01, no 2^128) over poly1305.cuh's functions.
  const char* source = R"(
#include "poly1305.cuh"
__global__ void poly1305_mac(const unsigned char* m, unsigned long long n, const unsigned int* key, unsigned char* tag) {
  const poly1305_mul_by r = poly1305_multiplier(poly1305_clamped_r(key));
  poly1305_elem h = poly1305_zero();
  unsigned long long at = 0;
  for (; at + 16 <= n; at += 16) h = poly1305_step(h, cipher_load16<false>(m + at), r);
  if (at < n) {
    unsigned char last[16] = {0};
    for (unsigned long long i = at; i < n; ++i) last[i - at] = m[i];
    last[n - at] = 1;
    poly1305_elem b = poly1305_block(cipher_load16<false>(last));
    b.l[4] &= ~(1u << 24);
    h = poly1305_mul(poly1305_add(h, b), r);
  }
  cipher_store_partial(tag, poly1305_finish(h, key + 4), 16);
})";
  opkit::Program program = opkit::Program(source).name("poly1305_test.cu");
  // The operator's own headers, as its bulk program carries them.
  const opkit::Program bulk = opkit::ops::chacha20_bulk_program(false, false);
  for (const auto& [name, text] : bulk.spec().headers) program.header(name, text);
  const opkit::Kernel kernel = cpu.compile(program).kernel("poly1305_mac");
  auto mac = [&](const Bytes& key, const Bytes& m) {
    auto k = cpu.alloc<std::uint8_t>(32);
    auto msg = cpu.alloc<std::uint8_t>(std::max<std::size_t>(m.size(), 1));
    auto tag = cpu.alloc<std::uint8_t>(16);
    k.copy_from(key);
    if (!m.empty()) msg.view().subview(0, m.size()).copy_from(m);
    kernel.launch({.grid = 1, .block = 1}, msg, static_cast<unsigned long long>(m.size()),
                  reinterpret_cast<const unsigned int*>(k.data()), tag);
    return tag.to_host();
  };
  for (const Vector& v : load_vectors()) {
    if (v.cipher != "poly1305") continue;
    EXPECT_EQ(mac(v.key, v.plaintext), v.tag);
  }
  // All-ones key bytes and messages push every limb to its bound.
  for (int round = 0; round < 40; ++round) {
    const Bytes key = round < 4 ? Bytes(32, 0xff) : random_bytes(32);
    const Bytes m = round % 4 == 1 ? Bytes(16 * round, 0xff) : random_bytes(random_below(200));
    EVP_MAC* evp = EVP_MAC_fetch(nullptr, "POLY1305", nullptr);
    EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(evp);
    ASSERT_EQ(EVP_MAC_init(ctx, key.data(), key.size(), nullptr), 1);
    ASSERT_EQ(EVP_MAC_update(ctx, m.data(), m.size()), 1);
    Bytes want(16);
    std::size_t len = 0;
    ASSERT_EQ(EVP_MAC_final(ctx, want.data(), &len, want.size()), 1);
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(evp);
    EXPECT_EQ(mac(key, m), want) << "round " << round;
  }
}

}  // namespace
