// The cipher operators on the host CPU path (OpenSSL EVP, split over threads): standard vectors,
// differential tests against EVP called directly, batches, tampering, and argument validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "ops/cipher/cipher_checks.hpp"
#include "unit/cipher_test_support.hpp"

namespace {

using namespace cipher_test;
using opkit::ops::Cipher;
using opkit::ops::CipherKey;
namespace ops = opkit::ops;

Cipher cipher_named(const std::string& name) {
  auto c = ops::cipher_from_name(name);
  EXPECT_TRUE(c) << name;
  return *c;
}

TEST(CipherNames, RoundTripEveryCipherAndRejectUnknownOnes) {
  for (Cipher c : ops::all_ciphers()) EXPECT_EQ(ops::cipher_from_name(ops::cipher_traits(c).name), c);
  EXPECT_EQ(ops::cipher_from_name("AES-256-GCM"), Cipher::aes_256_gcm);
  EXPECT_FALSE(ops::cipher_from_name("aes-256-cbc"));
  EXPECT_FALSE(ops::cipher_from_name(""));
}

TEST(CipherHost, StandardVectorsEncryptDecryptAndRejectForgedTags) {
  for (const Vector& v : load_vectors()) {
    if (v.cipher == "poly1305") continue;
    SCOPED_TRACE("cipher-vectors.txt line " + std::to_string(v.line));
    const Cipher c = cipher_named(v.cipher);
    const CipherKey key{v.key, v.iv, v.aad};
    Bytes out(v.ciphertext.size(), 0xaa);
    if (!v.fail) {
      Bytes tag(v.tag.size());
      ops::encrypt(c, key, v.plaintext, out, tag);
      EXPECT_EQ(out, v.ciphertext);
      EXPECT_EQ(tag, v.tag);
      ops::decrypt(c, key, v.ciphertext, out, v.tag);
      EXPECT_EQ(out, v.plaintext);
    } else {
      try {
        ops::decrypt(c, key, v.ciphertext, out, v.tag);
        ADD_FAILURE() << "a forged message decrypted";
      } catch (const ops::AuthenticationError& e) {
        EXPECT_EQ(e.failed_indices(), std::vector<std::size_t>{0});
        EXPECT_NE(std::string(e.what()).find("authentication failed"), std::string::npos);
      }
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0; })) << "plaintext leaked";
    }
  }
}

TEST(CipherHost, ChaCha20TwelveByteNonceTakesTheCounterFromTheOptions) {
  // RFC 8439 2.4.2 through the RFC's own interface: nonce and counter 1.
  for (const Vector& v : load_vectors()) {
    if (v.cipher != "chacha20" || v.iv[0] != 1) continue;
    const Bytes nonce(v.iv.begin() + 4, v.iv.end());
    Bytes out(v.plaintext.size());
    ops::encrypt(Cipher::chacha20, {v.key, nonce}, v.plaintext, out, {}, {.chacha20_counter = 1});
    EXPECT_EQ(out, v.ciphertext) << "line " << v.line;
  }
}

TEST(CipherHost, EveryCipherMatchesOpenSslForLengthsUpTo300InPlaceAndNot) {
  for (Cipher c : ops::all_ciphers()) {
    SCOPED_TRACE(std::string(ops::cipher_traits(c).name));
    const bool aead = ops::cipher_traits(c).aead;
    for (std::size_t n = 0; n <= 300; n += 1 + random_below(7)) {
      const Bytes key = random_bytes(ops::cipher_traits(c).key_bytes);
      const Bytes iv = random_iv(c, n % 3 == 0);
      const Bytes aad = aead ? random_bytes(random_below(70)) : Bytes{};
      const Bytes plain = random_bytes(n);
      const Sealed want = reference_encrypt(c, key, iv, aad, plain);
      Bytes out(n), tag(want.tag.size());
      ops::encrypt(c, {key, iv, aad}, plain, out, tag);
      ASSERT_EQ(out, want.data) << n;
      ASSERT_EQ(tag, want.tag) << n;
      Bytes inplace = want.data;
      ops::decrypt(c, {key, iv, aad}, inplace, inplace, want.tag);
      ASSERT_EQ(inplace, plain) << n;
    }
  }
}

TEST(CipherHost, MultiMegabyteMessagesSplitOverThreadsMatchOpenSsl) {
  // 4 threads over ~5 MiB: counter ranges per thread; CTR's IV ends in ff.. so the 128-bit
  // counter carries across a range boundary.
  for (Cipher c : ops::all_ciphers()) {
    SCOPED_TRACE(std::string(ops::cipher_traits(c).name));
    const Bytes key = random_bytes(ops::cipher_traits(c).key_bytes);
    Bytes iv = random_iv(c);
    if (!ops::cipher_traits(c).aead && c != Cipher::chacha20) std::fill(iv.begin() + 8, iv.end(), 0xff);
    const Bytes plain = random_bytes((5u << 20) + 77);
    const Sealed want = reference_encrypt(c, key, iv, {}, plain);
    Bytes out(plain.size()), tag(want.tag.size());
    ops::encrypt(c, {key, iv}, plain, out, tag, {.threads = 4});
    EXPECT_TRUE(out == want.data);
    EXPECT_EQ(tag, want.tag);
  }
}

TEST(CipherHost, AeadMessagesOverSeveralCoresMatchOpenSslAtEveryRangeShape) {
  // GCM's GHASH is combined from per-range values and ChaCha20-Poly1305's keystream split over
  // ranges (cipher_evp_aead.cpp): sizes just past a range, whole ranges and ragged ones, AAD
  // shorter and longer than a block, 2..8 ranges; a forged last byte or AAD fails and writes
  // nothing but zeros.
  for (Cipher c : ops::all_ciphers()) {
    if (!ops::cipher_traits(c).aead) continue;
    SCOPED_TRACE(std::string(ops::cipher_traits(c).name));
    for (std::size_t bytes : {(1u << 20) + 1, 2u << 20, (3u << 20) + 15, (7u << 20) + 333})
      for (unsigned threads : {2u, 3u, 8u}) {
        SCOPED_TRACE(std::to_string(bytes) + " bytes, " + std::to_string(threads) + " threads");
        const Bytes key = random_bytes(ops::cipher_traits(c).key_bytes), iv = random_iv(c);
        const Bytes aad = random_bytes(threads == 2 ? 0 : random_below(70));
        const Bytes plain = random_bytes(bytes);
        const Sealed want = reference_encrypt(c, key, iv, aad, plain);
        Bytes out(bytes), tag(want.tag.size());
        ops::encrypt(c, {key, iv, aad}, plain, out, tag, {.threads = threads});
        ASSERT_TRUE(out == want.data);
        ASSERT_EQ(tag, want.tag);
        Bytes opened(bytes);
        ops::decrypt(c, {key, iv, aad}, want.data, opened, want.tag, {.threads = threads});
        ASSERT_TRUE(opened == plain);
        ops::decrypt(c, {key, iv, aad}, out, out, tag, {.threads = threads});  // in place
        ASSERT_TRUE(out == plain);

        Bytes forged = want.data, forged_aad = aad;
        forged.back() ^= 0x80;
        forged_aad.push_back(0);
        Bytes refused(bytes, 0x55);
        EXPECT_THROW(ops::decrypt(c, {key, iv, aad}, forged, refused, want.tag, {.threads = threads}),
                     ops::AuthenticationError);
        EXPECT_TRUE(std::all_of(refused.begin(), refused.end(), [](std::uint8_t b) { return b == 0; }));
        EXPECT_THROW(ops::decrypt(c, {key, iv, forged_aad}, want.data, refused, want.tag, {.threads = threads}),
                     ops::AuthenticationError);
      }
  }
  // A truncated GCM tag over several ranges, and a 60-byte GCM nonce (one core: J0 = GHASH(IV)).
  const Bytes key = random_bytes(32), plain = random_bytes((4u << 20) + 5);
  for (const Bytes& iv : {random_bytes(12), random_bytes(60)}) {
    const Sealed want = reference_encrypt(Cipher::aes_256_gcm, key, iv, {}, plain, 12);
    Bytes out(plain.size()), tag(12);
    ops::encrypt(Cipher::aes_256_gcm, {key, iv}, plain, out, tag, {.threads = 4});
    EXPECT_TRUE(out == want.data);
    EXPECT_EQ(tag, want.tag);
    ops::decrypt(Cipher::aes_256_gcm, {key, iv}, out, out, tag, {.threads = 4});
    EXPECT_TRUE(out == plain);
  }
}

TEST(CipherHost, TruncatedGcmTagsVerifyAndOtherLengthsAreRejected) {
  const Bytes key = random_bytes(16), iv = random_bytes(12), plain = random_bytes(100);
  for (std::size_t t : {4u, 8u, 12u, 13u, 16u}) {
    const Sealed want = reference_encrypt(Cipher::aes_128_gcm, key, iv, {}, plain, t);
    Bytes out(100), tag(t);
    ops::encrypt(Cipher::aes_128_gcm, {key, iv}, plain, out, tag);
    EXPECT_EQ(tag, want.tag);
    ops::decrypt(Cipher::aes_128_gcm, {key, iv}, out, out, tag);
    EXPECT_EQ(out, plain);
  }
  Bytes out(100), tag(11);
  EXPECT_THROW(ops::encrypt(Cipher::aes_128_gcm, {key, iv}, plain, out, tag), opkit::Error);
  Bytes tag12(12);
  EXPECT_THROW(ops::encrypt(Cipher::chacha20_poly1305, {random_bytes(32), iv}, plain, out, tag12), opkit::Error);
}

TEST(CipherHost, AFlippedBitInCiphertextTagOrAadFailsAndZeroesTheOutput) {
  for (Cipher c : {Cipher::aes_256_gcm, Cipher::chacha20_poly1305}) {
    const Bytes key = random_bytes(32), iv = random_bytes(12), aad = random_bytes(20), plain = random_bytes(333);
    const Sealed sealed = reference_encrypt(c, key, iv, aad, plain);
    for (int what = 0; what < 3; ++what) {
      Bytes ct = sealed.data, tag = sealed.tag, a = aad;
      Bytes& target = what == 0 ? ct : (what == 1 ? tag : a);
      target[random_below(target.size())] ^= static_cast<std::uint8_t>(1u << random_below(8));
      Bytes out(ct.size(), 0x55);
      EXPECT_THROW(ops::decrypt(c, {key, iv, a}, ct, out, tag), ops::AuthenticationError) << what;
      EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0; }));
    }
  }
}

// A batch of `count` random messages, variable or fixed length, with per-message keys, IVs, AAD.
struct RandomBatch {
  ops::CipherBatch batch;
  Bytes data, keys, ivs, aad;
  std::vector<std::uint64_t> offsets, aad_offsets;
  std::vector<Sealed> want;
  Bytes sealed, tags;

  RandomBatch(Cipher c, std::size_t count, bool fixed) {
    const bool aead = ops::cipher_traits(c).aead;
    const std::size_t fixed_len = 1 + random_below(200);
    offsets.push_back(0);
    aad_offsets.push_back(0);
    for (std::size_t i = 0; i < count; ++i) {
      const Bytes key = random_bytes(ops::cipher_traits(c).key_bytes), iv = random_iv(c);
      const Bytes a = aead ? random_bytes(random_below(40)) : Bytes{};
      const Bytes m = random_bytes(fixed ? fixed_len : random_below(300));
      want.push_back(reference_encrypt(c, key, iv, a, m));
      keys.insert(keys.end(), key.begin(), key.end());
      ivs.insert(ivs.end(), iv.begin(), iv.end());
      aad.insert(aad.end(), a.begin(), a.end());
      data.insert(data.end(), m.begin(), m.end());
      sealed.insert(sealed.end(), want.back().data.begin(), want.back().data.end());
      tags.insert(tags.end(), want.back().tag.begin(), want.back().tag.end());
      offsets.push_back(data.size());
      aad_offsets.push_back(aad.size());
    }
    batch.count = count;
    batch.message_bytes = fixed ? fixed_len : 0;
    if (!fixed) batch.offsets = offsets;
    batch.keys = keys;
    batch.ivs = ivs;
    batch.iv_bytes = ops::cipher_traits(c).aead ? 12 : 16;
    if (aead) batch.aad = aad, batch.aad_offsets = aad_offsets;
  }
};

TEST(CipherHost, BatchesMatchOpenSslPerMessageAndReportEveryForgedIndex) {
  for (Cipher c : ops::all_ciphers()) {
    for (bool fixed : {false, true}) {
      SCOPED_TRACE(std::string(ops::cipher_traits(c).name) + (fixed ? " fixed" : " variable"));
      RandomBatch b(c, 37, fixed);
      Bytes out(b.data.size()), tags(b.tags.size());
      ops::encrypt_batch(c, b.batch, b.data, out, tags, {.threads = 3});
      EXPECT_EQ(out, b.sealed);
      EXPECT_EQ(tags, b.tags);
      Bytes back = out;
      ops::decrypt_batch(c, b.batch, back, back, tags);
      EXPECT_EQ(back, b.data);
      if (!ops::cipher_traits(c).aead) continue;
      Bytes forged = b.tags;
      for (std::size_t i : {3u, 20u, 36u}) forged[i * 16] ^= 1;
      back = out;
      try {
        ops::decrypt_batch(c, b.batch, back, back, forged);
        ADD_FAILURE() << "forged tags accepted";
      } catch (const ops::AuthenticationError& e) {
        EXPECT_EQ(e.failed_indices(), (std::vector<std::size_t>{3, 20, 36}));
      }
      for (std::size_t i = 0; i < 37; ++i) {
        const bool zeroed = i == 3 || i == 20 || i == 36;
        for (std::uint64_t k = b.offsets[i]; k < b.offsets[i + 1]; ++k)
          ASSERT_EQ(back[k], zeroed ? 0 : b.data[k]) << "message " << i;
      }
    }
  }
}

TEST(CipherHost, BadSizesAndOverlapsAreClearErrorsThatNeverShowTheKey) {
  const Bytes key = from_hex("a1a2a3a4a5a6a7a8a9aaabacadaeafb0a1a2a3a4a5a6a7a8a9aaabacadaeafb0");
  Bytes buf(64), tag(16);
  auto message_of = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const opkit::Error& e) {
      EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
      return e.what();
    }
    return "no error";
  };
  const std::string short_key = message_of([&] {
    ops::encrypt(Cipher::aes_128_ctr, {Bytes(key.begin(), key.begin() + 15), Bytes(16)}, buf, buf);
  });
  EXPECT_NE(short_key.find("16-byte key"), std::string::npos) << short_key;
  const std::string bad_iv = message_of([&] { ops::encrypt(Cipher::aes_256_ctr, {key, Bytes(12)}, buf, buf); });
  EXPECT_NE(bad_iv.find("16-byte IV"), std::string::npos) << bad_iv;
  const std::string empty_nonce = message_of([&] { ops::encrypt(Cipher::aes_256_gcm, {key, Bytes{}}, buf, buf, tag); });
  EXPECT_NE(empty_nonce.find("nonce of 0 bytes"), std::string::npos) << empty_nonce;
  EXPECT_NE(message_of([&] { ops::encrypt(Cipher::chacha20_poly1305, {key, Bytes(16)}, buf, buf, tag); }), "no error");
  EXPECT_NE(message_of([&] { ops::encrypt(Cipher::chacha20, {key, Bytes(8)}, buf, buf); }), "no error");
  EXPECT_NE(message_of([&] { ops::encrypt(Cipher::aes_128_ctr, {Bytes(16), Bytes(16)}, buf, buf, tag); }), "no error");
  EXPECT_NE(message_of([&] {
              ops::encrypt(Cipher::aes_128_gcm, {Bytes(16), Bytes(12), Bytes{}}, buf, buf);
            }),
            "no error");
  const std::string overlap = message_of([&] {
    ops::encrypt(Cipher::aes_256_ctr, {key, Bytes(16)}, std::span<const std::uint8_t>(buf.data(), 32),
                 std::span<std::uint8_t>(buf.data() + 8, 32));
  });
  EXPECT_NE(overlap.find("overlap"), std::string::npos) << overlap;
  EXPECT_NE(message_of([&] {
              ops::encrypt(Cipher::aes_256_ctr, {key, Bytes(16)}, std::span<const std::uint8_t>(buf.data(), 32),
                           std::span<std::uint8_t>(buf.data() + 32, 31));
            }),
            "no error");
  for (const std::string& m : {short_key, bad_iv, empty_nonce, overlap}) {
    EXPECT_EQ(m.find("a1a2a3"), std::string::npos) << "key bytes in a message: " << m;
    EXPECT_EQ(m.find("A1A2A3"), std::string::npos) << m;
  }
}

TEST(CipherHost, LengthsPastTheCounterSpaceAreRejected) {
  namespace d = ops::detail;
  const Bytes iv12(12), iv16(16);
  // GCM: 2^32 - 2 blocks of 16 bytes.
  EXPECT_NO_THROW(d::check_message(Cipher::aes_128_gcm, 16, iv12, 16, ((1ull << 32) - 2) * 16, 0, "t"));
  EXPECT_THROW(d::check_message(Cipher::aes_128_gcm, 16, iv12, 16, ((1ull << 32) - 2) * 16 + 1, 0, "t"), opkit::Error);
  // chacha20: the 32-bit block counter from its start value.
  Bytes near_end(16);
  near_end[0] = 0xfe, near_end[1] = near_end[2] = near_end[3] = 0xff;  // counter 2^32 - 2
  EXPECT_NO_THROW(d::check_message(Cipher::chacha20, 32, near_end, 0, 128, 0, "t"));
  EXPECT_THROW(d::check_message(Cipher::chacha20, 32, near_end, 0, 129, 0, "t"), opkit::Error);
  EXPECT_THROW(d::check_message(Cipher::chacha20, 32, iv12, 0, 65, 0xffffffffu, "t"), opkit::Error);
  // chacha20-poly1305: counters 1 .. 2^32 - 1 for the data.
  EXPECT_NO_THROW(d::check_message(Cipher::chacha20_poly1305, 32, iv12, 16, ((1ull << 32) - 1) * 64, 0, "t"));
  EXPECT_THROW(d::check_message(Cipher::chacha20_poly1305, 32, iv12, 16, ((1ull << 32) - 1) * 64 + 1, 0, "t"),
               opkit::Error);
}

TEST(CipherHost, BatchArgumentsAreChecked) {
  const Bytes data(100), keys(2 * 32), ivs(2 * 12), tags(32);
  Bytes out(100);
  ops::CipherBatch b{.count = 2, .message_bytes = 50, .keys = keys, .ivs = ivs, .iv_bytes = 12};
  EXPECT_NO_THROW(ops::encrypt_batch(Cipher::chacha20_poly1305, b, data, out, std::span(out.data(), 32)));
  ops::CipherBatch wrong_len = b;
  wrong_len.message_bytes = 49;
  EXPECT_THROW(ops::encrypt_batch(Cipher::chacha20_poly1305, wrong_len, data, out, std::span(out.data(), 32)),
               opkit::Error);
  ops::CipherBatch short_keys = b;
  short_keys.keys = std::span(keys.data(), 63);
  EXPECT_THROW(ops::decrypt_batch(Cipher::chacha20_poly1305, short_keys, data, out, tags), opkit::Error);
  const std::vector<std::uint64_t> backwards = {0, 60, 50};
  ops::CipherBatch bad_offsets = b;
  bad_offsets.offsets = backwards;
  EXPECT_THROW(ops::decrypt_batch(Cipher::chacha20_poly1305, bad_offsets, data, out, tags), opkit::Error);
  EXPECT_THROW(ops::decrypt_batch(Cipher::chacha20_poly1305, b, data, out, std::span(tags.data(), 31)), opkit::Error);
}

}  // namespace
