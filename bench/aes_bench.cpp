// AES throughput on a CUDA GPU, device-resident data: bulk AES-128/256-CTR and AES-128/256-GCM
// (encrypt, and decrypt / decrypt-verify) on one large message, and batches of packets each with
// its own key and IV. Times each call with events on one stream (median of --reps runs, fresh
// random data, whole call: setup, kernels, key wipe). Every bulk case is checked against OpenSSL
// EVP once; exits 1 on a mismatch.
//
// usage: opkit_aes_bench [--device D] [--bytes N] [--reps N] [--batch N] [--packet N] [--cubin PATH]
//   --device D   any device name (default cuda:0; cpu:0 checks this program without a GPU)
//   --bytes N    bulk message size (default 1 GiB)
//   --batch N    messages per batch (default 10^6), --packet N bytes each (default 1500)
//   --cubin PATH write the AES program's cubin there (for tools/sass_count.py)
#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "opkit/opkit.hpp"
#include "ops/cipher/aes_device.hpp"
#include "ops/cipher/aes_kernels.hpp"

namespace {

namespace aes = opkit::ops::aes;
using Bytes = std::vector<std::uint8_t>;

// Fast fresh random bytes (splitmix64), in parallel.
void fill_random(Bytes& out, std::uint64_t seed) {
  const std::size_t words = out.size() / 8;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::memcpy(out.data() + 8 * i, &z, 8);
  }
  for (std::size_t i = 8 * words; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(seed + i);
}

Bytes random_bytes(std::size_t n, std::uint64_t seed) {
  Bytes b(n);
  fill_random(b, seed);
  return b;
}

double median_ms(const opkit::Device& gpu, const opkit::Stream& stream, int reps, const std::function<void()>& call) {
  call();  // warm-up (compiles on first use)
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    opkit::Event start = gpu.create_event(), stop = gpu.create_event();
    start.record(stream);
    call();
    stop.record(stream);
    stop.synchronize();
    ms.push_back(opkit::Event::elapsed_ms(start, stop));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

bool openssl_matches(const EVP_CIPHER* cipher, const Bytes& key, const Bytes& iv, const Bytes& in, const Bytes& out,
                     const Bytes* tag) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes want(in.size() + 16);
  int n = 0, tail = 0;
  EVP_EncryptInit_ex(ctx, cipher, nullptr, nullptr, nullptr);
  if (tag != nullptr) EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr);
  EVP_EncryptInit_ex(ctx, nullptr, nullptr, key.data(), iv.data());
  std::size_t done = 0;
  while (done < in.size()) {  // EVP takes int lengths
    const int chunk = static_cast<int>(std::min<std::size_t>(in.size() - done, 1u << 30));
    EVP_EncryptUpdate(ctx, want.data() + done, &n, in.data() + done, chunk);
    done += static_cast<std::size_t>(n);
  }
  EVP_EncryptFinal_ex(ctx, want.data() + done, &tail);
  Bytes want_tag(16);
  if (tag != nullptr) EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, want_tag.data());
  EVP_CIPHER_CTX_free(ctx);
  want.resize(done);
  return want == out && (tag == nullptr || *tag == want_tag);
}

struct Row {
  std::string name, op;
  std::size_t bytes;
  double ms;
  bool ok;
};

}  // namespace

int main(int argc, char** argv) {
  std::size_t bytes = std::size_t{1} << 30, batch = 1000000, packet = 1500;
  int reps = 7;
  std::string cubin, device = "cuda:0";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--device")
      device = argv[i + 1];
    else if (a == "--bytes")
      bytes = std::stoull(argv[i + 1]);
    else if (a == "--reps")
      reps = std::stoi(argv[i + 1]);
    else if (a == "--batch")
      batch = std::stoull(argv[i + 1]);
    else if (a == "--packet")
      packet = std::stoull(argv[i + 1]);
    else if (a == "--cubin")
      cubin = argv[i + 1];
  }
  const opkit::Device gpu = opkit::Device::parse(device);
  const opkit::Stream stream = gpu.create_stream();
  if (!cubin.empty()) {
    const opkit::CompiledProgram compiled = gpu.build(aes::aes_program());
    std::ofstream(cubin, std::ios::binary)
        .write(reinterpret_cast<const char*>(compiled.binary.data()),
               static_cast<std::streamsize>(compiled.binary.size()));
  }
  std::vector<Row> rows;
  bool all_ok = true;

  const Bytes host_in = random_bytes(bytes, 1);
  auto in = gpu.alloc<std::uint8_t>(bytes), out = gpu.alloc<std::uint8_t>(bytes), back = gpu.alloc<std::uint8_t>(bytes);
  auto tag = gpu.alloc<std::uint8_t>(16), no_aad = gpu.alloc<std::uint8_t>(0);
  in.copy_from(std::span<const std::uint8_t>(host_in));
  for (std::size_t key_bytes : {std::size_t{16}, std::size_t{32}}) {
    const Bytes key = random_bytes(key_bytes, 100 + key_bytes), ctr = random_bytes(16, 7), iv = random_bytes(12, 8);
    const std::string bits = std::to_string(8 * key_bytes);
    const std::span<const std::uint8_t, 16> counter(ctr.data(), 16);
    // CTR: encrypt in -> out, decrypt out -> back.
    const double enc = median_ms(gpu, stream, reps, [&] { aes::aes_ctr_xor(gpu, key, counter, in, out, &stream); });
    const bool ctr_ok = openssl_matches(key_bytes == 16 ? EVP_aes_128_ctr() : EVP_aes_256_ctr(), key, ctr, host_in,
                                        out.to_host(), nullptr);
    const double dec = median_ms(gpu, stream, reps, [&] { aes::aes_ctr_xor(gpu, key, counter, out, back, &stream); });
    const bool round_trip = back.to_host() == host_in;
    rows.push_back({"aes-" + bits + "-ctr", "encrypt", bytes, enc, ctr_ok});
    rows.push_back({"aes-" + bits + "-ctr", "decrypt", bytes, dec, round_trip});
    // GCM: seal in -> out + tag, open out -> back (tag verified first).
    const double seal =
        median_ms(gpu, stream, reps, [&] { aes::aes_gcm_seal(gpu, key, iv, no_aad, in, out, tag, &stream); });
    const Bytes host_tag = tag.to_host();
    const bool gcm_ok = openssl_matches(key_bytes == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm(), key, iv, host_in,
                                        out.to_host(), &host_tag);
    bool verified = true;
    const double open = median_ms(gpu, stream, reps, [&] {
      verified = aes::aes_gcm_open(gpu, key, iv, no_aad, out, back, tag, &stream) && verified;
    });
    rows.push_back({"aes-" + bits + "-gcm", "encrypt", bytes, seal, gcm_ok});
    rows.push_back({"aes-" + bits + "-gcm", "decrypt+verify", bytes, open, verified && back.to_host() == host_in});
  }

  // Batches of packets, each with its own key and IV (12 bytes), 13 bytes of AAD, 16-byte tags.
  {
    const std::size_t total = batch * packet;
    const Bytes host_batch = random_bytes(total, 3);
    auto data = gpu.alloc<std::uint8_t>(total), sealed = gpu.alloc<std::uint8_t>(total);
    data.copy_from(std::span<const std::uint8_t>(host_batch));
    auto aad = gpu.alloc<std::uint8_t>(batch * 13);
    aad.copy_from(std::span<const std::uint8_t>(random_bytes(batch * 13, 4)));
    auto tags = gpu.alloc<std::uint8_t>(batch * 16);
    auto ivs = gpu.alloc<std::uint8_t>(batch * 16);
    ivs.copy_from(std::span<const std::uint8_t>(random_bytes(batch * 16, 5)));
    const aes::BatchLayout layout{batch, packet, std::nullopt}, aad_layout{batch, 13, std::nullopt};
    for (std::size_t key_bytes : {std::size_t{16}, std::size_t{32}}) {
      auto keys = gpu.alloc<std::uint8_t>(batch * key_bytes);
      keys.copy_from(std::span<const std::uint8_t>(random_bytes(batch * key_bytes, 6 + key_bytes)));
      const std::string bits = std::to_string(8 * key_bytes),
                        shape = std::to_string(batch) + "x" + std::to_string(packet);
      const double ctr = median_ms(
          gpu, stream, reps, [&] { aes::aes_ctr_xor_batch(gpu, key_bytes, keys, ivs, layout, data, sealed, &stream); });
      rows.push_back({"aes-" + bits + "-ctr batch " + shape, "encrypt", total, ctr, true});
      auto ivs12 = ivs.view().subview(0, batch * 12);
      const double seal = median_ms(gpu, stream, reps, [&] {
        aes::aes_gcm_seal_batch(gpu, key_bytes, keys, 12, ivs12, aad, aad_layout, layout, data, sealed, 16, tags,
                                &stream);
      });
      std::size_t failed = 0;
      const double open = median_ms(gpu, stream, reps, [&] {
        failed += aes::aes_gcm_open_batch(gpu, key_bytes, keys, 12, ivs12, aad, aad_layout, layout, sealed, data, 16,
                                          tags, &stream)
                      .size();
      });
      const bool same = data.to_host() == host_batch;
      rows.push_back({"aes-" + bits + "-gcm batch " + shape, "encrypt", total, seal, true});
      rows.push_back({"aes-" + bits + "-gcm batch " + shape, "decrypt+verify", total, open, failed == 0 && same});
    }
  }

  std::printf("%-34s %-15s %12s %10s %9s %s\n", "cipher", "op", "bytes", "ms", "GB/s", "check");
  for (const Row& r : rows) {
    std::printf("%-34s %-15s %12zu %10.3f %9.1f %s\n", r.name.c_str(), r.op.c_str(), r.bytes, r.ms,
                static_cast<double>(r.bytes) / (r.ms * 1e6), r.ok ? "ok" : "WRONG");
    all_ok = all_ok && r.ok;
  }
  return all_ok ? 0 : 1;
}
