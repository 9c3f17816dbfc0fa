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

// Messages back to back (offsets), each with its key, IV and AAD, and what OpenSSL makes of it.
struct ReferenceBatch {
  std::vector<std::uint64_t> offsets{0}, aad_offsets{0};
  Bytes data, keys, ivs, aad, sealed, tags;

  // Appends message m; OpenSSL seals it under reference_iv (the IV as OpenSSL takes it, where the
  // batch carries a shorter one).
  void add(Cipher c, const Bytes& key, const Bytes& iv, const Bytes& a, const Bytes& m, const Bytes& reference_iv) {
    const Sealed ref = reference_encrypt(c, key, reference_iv, a, m);
    keys.insert(keys.end(), key.begin(), key.end());
    ivs.insert(ivs.end(), iv.begin(), iv.end());
    aad.insert(aad.end(), a.begin(), a.end());
    data.insert(data.end(), m.begin(), m.end());
    sealed.insert(sealed.end(), ref.data.begin(), ref.data.end());
    tags.insert(tags.end(), ref.tag.begin(), ref.tag.end());
    offsets.push_back(data.size());
    aad_offsets.push_back(aad.size());
  }
  void add(Cipher c, const Bytes& key, const Bytes& iv, const Bytes& a, const Bytes& m) { add(c, key, iv, a, m, iv); }
};

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
      ReferenceBatch r;
      for (std::size_t i = 0; i < count; ++i) {
        const Bytes key = random_bytes(32), iv = random_iv(c), a = aead ? random_bytes(random_below(40)) : Bytes{};
        r.add(c, key, iv, a, random_bytes(layout == 0 ? random_below(300) : fixed_len));
      }
      auto& [offsets, aad_offsets, data, keys, ivs, aad, sealed, tags] = r;
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
      ReferenceBatch r;
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t n = layout == 0 ? 1500 : i < std::size(lengths) ? lengths[i] : random_below(1600);
        const Bytes key = random_bytes(ops::cipher_traits(c).key_bytes), iv = random_iv(c);
        r.add(c, key, iv, aead && layout == 1 ? random_bytes(random_below(40)) : Bytes{}, random_bytes(n));
      }
      auto& [offsets, aad_offsets, data, keys, ivs, aad, sealed, tags] = r;
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

// Messages for chacha20_batch.cu launched directly: back to back (offsets), each with its key, IV
// (ChaCha20: 16 bytes, the counter word first, or 12 with the kernel's `counter`), AAD, and what
// OpenSSL makes of it.
struct KernelBatch : ReferenceBatch {
  unsigned iv_bytes = 16;
  std::uint32_t counter = 0;
};

KernelBatch kernel_batch(Cipher c, const std::vector<std::size_t>& lengths, bool with_aad, unsigned iv_bytes) {
  const bool aead = ops::cipher_traits(c).aead;
  KernelBatch b;
  b.iv_bytes = aead ? 12 : iv_bytes;
  b.counter = static_cast<std::uint32_t>(random_below(1u << 24));
  for (const std::size_t n : lengths) {
    const Bytes key = random_bytes(32), m = random_bytes(n);
    Bytes iv = random_iv(c), reference_iv = iv;
    if (!aead && iv_bytes == 12) {
      iv.erase(iv.begin(), iv.begin() + 4);  // the nonce; the counter is the kernel's parameter
      for (int k = 0; k < 4; ++k) reference_iv[k] = static_cast<std::uint8_t>(b.counter >> (8 * k));
    }
    // Mostly short AAD, now and then several Poly1305 blocks of it.
    const Bytes a = with_aad ? random_bytes(random_below(4) == 0 ? 100 + random_below(60) : random_below(40)) : Bytes{};
    b.add(c, key, iv, a, m, reference_iv);
  }
  return b;
}

// What one launch of the batch kernel leaves: the output, the tags (encryption), and for
// decryption the verdicts and the failure count.
struct KernelRun {
  Bytes out, tags, verdicts;
  std::uint64_t failures = 0;
};

// Runs the batch kernel at G = 2^lanes_log2 threads per message (as chacha20_device.cpp
// launches it, but G chosen here) from `from` (`in` at `shift` past an aligned address) to out
// (in place, same phase, or another phase); fixed: the messages' common length instead of
// offsets. expected: the tags a decrypting AEAD build verifies (null for the other builds).
KernelRun run_batch_kernel(const opkit::Device& cpu, const opkit::Kernel& kernel, const KernelBatch& b,
                           const Bytes& from, bool fixed, unsigned lanes_log2, std::size_t shift, int mode,
                           const Bytes* expected = nullptr) {
  const std::size_t count = b.offsets.size() - 1, bytes = from.size();
  auto in_store = cpu.alloc<std::uint8_t>(bytes + 48), out_store = cpu.alloc<std::uint8_t>(bytes + 48);
  auto at = [](opkit::DeviceBuffer<std::uint8_t>& store, std::size_t phase) {
    const auto address = reinterpret_cast<std::uintptr_t>(store.data());
    return store.data() + (16 - address % 16) % 16 + phase;
  };
  std::uint8_t* in = at(in_store, shift);
  std::uint8_t* out = mode == 0 ? in : at(out_store, mode == 1 ? shift : (shift + 5) % 16);
  std::copy(from.begin(), from.end(), in);
  auto keys = cpu.alloc<std::uint8_t>(b.keys.size()), ivs = cpu.alloc<std::uint8_t>(b.ivs.size());
  auto aad = cpu.alloc<std::uint8_t>(std::max<std::size_t>(b.aad.size(), 1)),
       tags = cpu.alloc<std::uint8_t>(16 * count), verdicts = cpu.alloc<std::uint8_t>(count);
  auto offsets = cpu.alloc<std::uint64_t>(b.offsets.size()), aad_offsets = cpu.alloc<std::uint64_t>(count + 1);
  auto failures = cpu.alloc<std::uint64_t>(1);
  keys.copy_from(b.keys);
  ivs.copy_from(b.ivs);
  if (!b.aad.empty()) aad.view().subview(0, b.aad.size()).copy_from(b.aad);
  offsets.copy_from(b.offsets);
  aad_offsets.copy_from(b.aad_offsets);
  if (expected != nullptr) tags.copy_from(*expected);
  verdicts.fill(0xEE);
  failures.fill(0);
  const std::uint64_t* no_offsets = nullptr;
  const unsigned per_block = 256u >> lanes_log2;
  const unsigned mac_key_bytes = (6 + lanes_log2) * 20;  // CHACHA20_MAC_KEY_ELEMS Poly1305 elements
  kernel.launch({.grid = static_cast<unsigned>((count + per_block - 1) / per_block),
                 .block = 256,
                 .shared_bytes = per_block * mac_key_bytes},
                static_cast<const std::uint8_t*>(in), out, static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(fixed ? b.offsets[1] : 0),
                fixed ? no_offsets : static_cast<const std::uint64_t*>(offsets.data()),
                static_cast<const std::uint8_t*>(keys.data()), static_cast<const std::uint8_t*>(aad.data()),
                b.aad.empty() ? no_offsets : static_cast<const std::uint64_t*>(aad_offsets.data()), tags.data(),
                static_cast<const std::uint8_t*>(ivs.data()), b.iv_bytes, b.counter, lanes_log2,
                expected != nullptr ? verdicts.data() : nullptr, expected != nullptr ? failures.data() : nullptr);
  KernelRun run{Bytes(out, out + bytes), tags.to_host(), verdicts.to_host(), 0};
  run.failures = failures.to_host()[0];
  return run;
}

// The messages of b to forge (every third, and the last), each by one flipped bit in its tag or,
// when it has any, its ciphertext; their indices ascending.
std::vector<std::size_t> forge_kernel_batch(const KernelBatch& b, Bytes& sealed, Bytes& tags) {
  std::vector<std::size_t> forged;
  const std::size_t count = b.offsets.size() - 1;
  for (std::size_t i = 0; i < count; ++i) {
    if (i % 3 != 1 && i + 1 != count) continue;
    forged.push_back(i);
    const std::size_t n = b.offsets[i + 1] - b.offsets[i];
    if (n != 0 && i % 2 == 0)
      sealed[b.offsets[i] + random_below(n)] ^= static_cast<std::uint8_t>(1u << random_below(8));
    else
      tags[16 * i + random_below(16)] ^= static_cast<std::uint8_t>(1u << random_below(8));
  }
  return forged;
}

// chacha20_batch.cu at every G, 1..32 threads per message (the host picks up to 8), on the CPU
// backend, against OpenSSL: lengths around the 64-byte blocks and the group's rounds (0, 1, 63,
// 64, 65, 64 G +- 1, several rounds of the group) mixed in one offsets batch with AAD of one to
// several Poly1305 blocks, message counts that leave the last block of threads partly empty, and
// fixed-length batches (1500 bytes; 1024 through the ALIGNED build); at shifts 0, 3 and 12, in
// place, out of place in the same phase (chunk path: lanes hand keystream over) and in another
// (byte path); ChaCha20 with a 16- or 12-byte IV, ChaCha20-Poly1305 sealing and opening. Opening
// verifies in the kernel: every verdict 1 and no failure counted for the sealed batch; with a bit
// flipped in some messages' tag or ciphertext, exactly those verdicts 0, the count theirs, their
// output zero and the others' plaintext.
TEST(CipherKernels, BatchKernelMatchesOpenSslAtEveryGroupSizeLengthAndAlignment) {
  CPU_BACKEND_OR_SKIP();
  for (Cipher c : {Cipher::chacha20, Cipher::chacha20_poly1305}) {
    const bool aead = ops::cipher_traits(c).aead;
    for (bool aligned : {false, true}) {
      std::vector<opkit::Kernel> kernels;  // encrypt, decrypt (AEAD)
      for (bool decrypt : {false, true})
        if (!decrypt || aead)
          kernels.push_back(cpu.compile(ops::chacha20_batch_program(aead, aligned, decrypt)).kernel("chacha20_batch"));
      for (unsigned lanes_log2 = 0; lanes_log2 <= 5; ++lanes_log2) {
        const std::size_t g = std::size_t{1} << lanes_log2, per_block = 256 >> lanes_log2;
        std::vector<std::size_t> lengths;
        if (aligned) {
          lengths.assign(per_block + 1, 1024);
        } else {
          lengths = {0, 1, 63, 64, 65, 64 * g - 1, 64 * g, 64 * g + 1, 3 * 64 * g + 17, 1500};
          while (lengths.size() % per_block == 0 || lengths.size() < 12) lengths.push_back(random_below(2000));
        }
        for (int shape = 0; shape < (aligned ? 1 : 3); ++shape) {  // mixed lengths, fixed 1500, 12-byte IV
          const bool fixed = aligned || shape == 1;
          const std::vector<std::size_t>& shape_lengths =
              shape == 1 ? std::vector<std::size_t>(per_block + 3, 1500) : lengths;
          if (shape == 2 && aead) continue;
          const KernelBatch b = kernel_batch(c, shape_lengths, aead && !fixed, shape == 2 ? 12 : 16);
          const std::size_t count = shape_lengths.size();
          for (std::size_t shift : aligned ? std::vector<std::size_t>{0} : std::vector<std::size_t>{0, 3, 12}) {
            for (int mode = 0; mode < (aligned ? 2 : 3); ++mode) {
              SCOPED_TRACE(std::string(ops::cipher_traits(c).name) + (aligned ? " ALIGNED" : "") +
                           " G=" + std::to_string(g) + " shape " + std::to_string(shape) + " shift " +
                           std::to_string(shift) + " mode " + std::to_string(mode));
              const KernelRun sealed = run_batch_kernel(cpu, kernels[0], b, b.data, fixed, lanes_log2, shift, mode);
              ASSERT_EQ(sealed.out, b.sealed);
              if (!aead) continue;
              ASSERT_EQ(sealed.tags, b.tags);
              const KernelRun opened =
                  run_batch_kernel(cpu, kernels[1], b, b.sealed, fixed, lanes_log2, shift, mode, &b.tags);
              ASSERT_EQ(opened.out, b.data);
              ASSERT_EQ(opened.verdicts, Bytes(count, 1));
              ASSERT_EQ(opened.failures, 0u);
              Bytes forged_sealed = b.sealed, forged_tags = b.tags;
              const std::vector<std::size_t> forged = forge_kernel_batch(b, forged_sealed, forged_tags);
              const KernelRun failed =
                  run_batch_kernel(cpu, kernels[1], b, forged_sealed, fixed, lanes_log2, shift, mode, &forged_tags);
              ASSERT_EQ(failed.failures, forged.size());
              for (std::size_t i = 0; i < count; ++i) {
                const bool bad = std::find(forged.begin(), forged.end(), i) != forged.end();
                const auto from = static_cast<std::ptrdiff_t>(b.offsets[i]),
                           to = static_cast<std::ptrdiff_t>(b.offsets[i + 1]);
                ASSERT_EQ(failed.verdicts[i], bad ? 0 : 1) << "message " << i;
                ASSERT_EQ(Bytes(failed.out.begin() + from, failed.out.begin() + to),
                          bad ? Bytes(static_cast<std::size_t>(to - from), 0)
                              : Bytes(b.data.begin() + from, b.data.begin() + to))
                    << "message " << i << (bad ? " (forged) not zeroed" : " wrong");
              }
            }
          }
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
