// Every cipher on a CUDA GPU, device-resident data, through the public C++ API
// (include/opkit/ops/cipher.hpp: checks, key uploads, kernels, key wipes, tag checks): one bulk
// message (default 1 GiB) encrypted and decrypted(-verified), and batches of small messages each
// with its own key and IV (default 10^6 x 64 B and 10^6 x 1500 B). Plus the ChaCha20 keystream
// kernel alone (parameters uploaded once), the floor under the API's ChaCha20 rows, and host data
// through the device against the host path for three ciphers (wall clock). Each call is
// timed with events on one stream (median of --reps, the call's whole latency), and bulk calls
// also back to back (shape "...-b2b": --reps calls queued, one wait, wall time per call); every encryption
// is compared with the host path (OpenSSL EVP over all cores) and every decryption with the
// original data; exits 1 on a mismatch.
//
// usage: opkit_cipher_bench [--device D] [--bytes N] [--reps N] [--batch N] [--small N] [--packet N]
//   --device D   any device name (default cuda:0; cpu:0 checks this program without a GPU;
//                host: only the host path's rows, one core against all)
//   --chacha20-schedules 0,1  only the ChaCha20 kernel-only row, once per CHACHA20_SCHEDULE
//                variant of chacha20_bulk.cu
//   --bulk-only 1  only the ChaCha20 kernel-only row and the bulk rows
//   --batch-only 1 only the batch rows (for profiling the batch kernels: ncu -k ...); each batch
//                also with its keys and IVs in device memory ("-devkeys" rows; AEADs also into
//                and against device tags, "encrypt-devkeys-devtags" and
//                "decrypt+verify-devkeys-devtags"; chacha20 also with 12-byte nonces, whose IVs
//                need no device-side counter check, "-devkeys-nonce12")
//   --ciphers A,B  only these ciphers' bulk and batch rows (names as cipher_from_name takes them)
//   --aes-batch-io staged,direct  the AES batch rows once per batch CTR IO (aes_batch_io.hpp:
//                staged, aes_ctr_batch through shared memory; direct, aes_ctr), each shape
//                marked "-staged" / "-direct"; without it, the default IO (OPKIT_AES_BATCH_IO)
//   --aes-slices 262144,1048576  the AES batch rows once per slice size (messages a slice:
//                aes_batch_io.hpp; slices alternate between two streams), marked "-slice<N>"
//   --aes-ghash tensor_cores,horner  the AES-GCM bulk rows once per GHASH engine
//                (aes_batch_io.hpp), marked "-tensorcores" / "-horner"
//   --poly1305-chains 1,16  only ChaCha20-Poly1305 encrypt and decrypt, once per
//                POLY1305_CHAINS variant of chacha20_bulk.cu (rows "-cN")
//   --aead-variants A=1,B=2  the same, once per definition (NAME=VALUE; "default": none) that
//                chacha20_bulk.cu is built with (rows "-NAME=VALUE")
//   --cubins DIR only write the kernels' sm_90 cubins there for tools/sass_count.py (aes.cu;
//                chacha20_bulk.cu aligned; chacha20_batch.cu for ChaCha20 and ChaCha20-Poly1305,
//                aligned and not, the AEAD encrypting and decrypting); needs NVRTC, not a GPU
// Prints one line per case: ROW cipher shape op bytes ms GB/s ok|WRONG
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cipher/aes_batch_io.hpp"
#include "cipher/aes_kernels.hpp"
#include "cipher/chacha20_device.hpp"
#include "cipher/cipher_kernels.hpp"
#include "opkit/opkit.hpp"
#include "opkit/ops/cipher.hpp"
#include "opkit/target.hpp"
#include "program_definitions.hpp"

namespace {

namespace ops = opkit::ops;
using Bytes = std::vector<std::uint8_t>;

// Fast fresh random bytes (splitmix64), in parallel.
Bytes random_bytes(std::size_t n, std::uint64_t seed) {
  Bytes out(n);
  const std::size_t words = n / 8;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::memcpy(out.data() + 8 * i, &z, 8);
  }
  for (std::size_t i = 8 * words; i < n; ++i) out[i] = static_cast<std::uint8_t>(seed + i);
  return out;
}

double median_ms(const opkit::Device& gpu, const opkit::Stream& stream, int reps, const std::function<void()>& call) {
  call();  // warm-up: compiles on first use
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

// Back to back: `reps` calls queued on the stream with one wait at the end, wall time per call:
// what a stream of calls gets when the host work of one call overlaps the GPU work of the last.
double back_to_back_ms(const opkit::Stream& stream, int reps, const std::function<void()>& call) {
  call();
  stream.synchronize();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) call();
  stream.synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / reps;
}

void row(const std::string& cipher, const std::string& shape, const char* op, std::size_t bytes, double ms, bool ok) {
  std::printf("ROW %-18s %-16s %-23s %12zu %10.3f %9.1f %s\n", cipher.c_str(), shape.c_str(), op, bytes, ms,
              static_cast<double>(bytes) / (ms * 1e6), ok ? "ok" : "WRONG");
  std::fflush(stdout);
}

// The IV each cipher takes (chacha20: counter 0 || nonce, room for 256 GiB).
Bytes iv_for(ops::Cipher cipher, std::uint64_t seed) {
  Bytes iv = random_bytes(ops::cipher_traits(cipher).aead ? 12 : 16, seed);
  if (cipher == ops::Cipher::chacha20) std::fill(iv.begin(), iv.begin() + 4, 0);
  return iv;
}

double wall_ms(int reps, const std::function<void()>& call) {
  call();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// The host path (OpenSSL EVP) of every cipher on one core and on all of them, encrypt and
// decrypt(+verify), by the wall clock: what the split into counter ranges (and, for the AEADs,
// cipher_evp_aead.cpp's combined GHASH / one-pass Poly1305) buys. Outputs checked against one core.
bool host_path_rows(const Bytes& host_in, int reps) {
  bool ok_all = true;
  const std::string shape = std::to_string(host_in.size() >> 20) + "MiB";
  for (ops::Cipher cipher : ops::all_ciphers()) {
    const auto& t = ops::cipher_traits(cipher);
    const Bytes key = random_bytes(t.key_bytes, 51), iv = iv_for(cipher, 52);
    Bytes one(host_in.size()), all(host_in.size()), back(host_in.size());
    Bytes tag_one(t.aead ? 16 : 0), tag_all(tag_one.size());
    for (unsigned threads : {1u, 0u}) {
      Bytes& out = threads == 1 ? one : all;
      Bytes& tag = threads == 1 ? tag_one : tag_all;
      const char* enc = threads == 1 ? "host-1core-enc" : "host-all-enc";
      const char* dec = threads == 1 ? "host-1core-dec" : "host-all-dec";
      const double e = wall_ms(reps, [&] { ops::encrypt(cipher, {key, iv}, host_in, out, tag, {.threads = threads}); });
      const double d = wall_ms(reps, [&] { ops::decrypt(cipher, {key, iv}, out, back, tag, {.threads = threads}); });
      const bool ok = out == one && tag == tag_one && back == host_in;
      row(std::string(t.name), shape, enc, host_in.size(), e, ok);
      row(std::string(t.name), shape, dec, host_in.size(), d, ok);
      ok_all = ok_all && ok;
    }
  }
  return ok_all;
}

struct Bench {
  opkit::Device gpu;
  opkit::Stream stream;
  int reps;
  bool all_ok = true;

  ops::CipherOptions options() const { return {.stream = &stream}; }

  // shape_suffix marks the rows (the GHASH engine they ran with, --aes-ghash).
  void bulk(ops::Cipher cipher, const Bytes& host_in, opkit::DeviceBuffer<std::uint8_t>& in,
            opkit::DeviceBuffer<std::uint8_t>& out, opkit::DeviceBuffer<std::uint8_t>& back,
            const std::string& shape_suffix = "") {
    const auto& t = ops::cipher_traits(cipher);
    const Bytes key = random_bytes(t.key_bytes, 11), iv = iv_for(cipher, 12);
    const ops::CipherKey k{key, iv};
    Bytes tag(t.aead ? ops::aead_tag_bytes : 0), want(host_in.size()), want_tag(tag.size());
    const opkit::BufferView<const std::uint8_t> src(in.view()), sealed(out.view());
    const auto encrypt = [&] { ops::encrypt(cipher, k, src, out.view(), tag, options()); };
    const double enc = median_ms(gpu, stream, reps, encrypt);
    const double enc_queued = back_to_back_ms(stream, reps, encrypt);
    ops::encrypt(cipher, k, host_in, want, want_tag);  // the host path: OpenSSL EVP, all cores
    const bool enc_ok = out.to_host() == want && tag == want_tag;
    const auto decrypt = [&] { ops::decrypt(cipher, k, sealed, back.view(), tag, options()); };
    const double dec = median_ms(gpu, stream, reps, decrypt);
    const double dec_queued = back_to_back_ms(stream, reps, decrypt);
    const bool dec_ok = back.to_host() == host_in;
    const std::string shape = std::to_string(host_in.size() >> 20) + "MiB" + shape_suffix;
    const std::string name(t.name);
    row(name, shape, "encrypt", host_in.size(), enc, enc_ok);
    row(name, shape, t.aead ? "decrypt+verify" : "decrypt", host_in.size(), dec, dec_ok);
    row(name, shape + "-b2b", "encrypt", host_in.size(), enc_queued, enc_ok);
    row(name, shape + "-b2b", t.aead ? "decrypt+verify" : "decrypt", host_in.size(), dec_queued, dec_ok);
    all_ok = all_ok && enc_ok && dec_ok;
  }

  // shape_suffix marks the rows (the AES batch IO they ran with, --aes-batch-io).
  void batch(ops::Cipher cipher, std::size_t count, std::size_t length, const std::string& shape_suffix = "") {
    const auto& t = ops::cipher_traits(cipher);
    const std::size_t total = count * length, iv_bytes = t.aead ? 12 : 16;
    const Bytes host_in = random_bytes(total, 21), keys = random_bytes(count * t.key_bytes, 22);
    Bytes ivs = random_bytes(count * iv_bytes, 23);
    if (cipher == ops::Cipher::chacha20)
      for (std::size_t i = 0; i < count; ++i) std::fill_n(ivs.begin() + static_cast<std::ptrdiff_t>(16 * i), 4, 0);
    const ops::CipherBatch b{.count = count, .message_bytes = length, .keys = keys, .ivs = ivs, .iv_bytes = iv_bytes};
    auto in = gpu.alloc<std::uint8_t>(total), out = gpu.alloc<std::uint8_t>(total),
         back = gpu.alloc<std::uint8_t>(total);
    in.copy_from(std::span<const std::uint8_t>(host_in));
    Bytes tags(t.aead ? count * ops::aead_tag_bytes : 0), want(total), want_tags(tags.size());
    const opkit::BufferView<const std::uint8_t> src(in.view()), sealed(out.view());
    const double enc =
        median_ms(gpu, stream, reps, [&] { ops::encrypt_batch(cipher, b, src, out.view(), tags, options()); });
    ops::encrypt_batch(cipher, b, host_in, want, want_tags);
    const bool enc_ok = out.to_host() == want && tags == want_tags;
    const double dec =
        median_ms(gpu, stream, reps, [&] { ops::decrypt_batch(cipher, b, sealed, back.view(), tags, options()); });
    const bool dec_ok = back.to_host() == host_in;
    const std::string shape = std::to_string(count) + "x" + std::to_string(length) + shape_suffix;
    row(std::string(t.name), shape, "encrypt", total, enc, enc_ok);
    row(std::string(t.name), shape, t.aead ? "decrypt+verify" : "decrypt", total, dec, dec_ok);
    all_ok = all_ok && enc_ok && dec_ok;
    batch_device_keys(cipher, b, in, out, back, host_in, want, want_tags, shape);
    if (cipher == ops::Cipher::chacha20) batch_device_nonces(b, in, out, host_in, shape);
  }

  // The batch above with its keys and IVs in device memory (uploaded once, outside the timing):
  // the same data and results, no key staging or upload in the call. AEADs also encrypt into
  // device tags (nothing comes back to the host) and decrypt against them (only the verdict comes
  // back). Rows "...-devkeys" (and "-devtags").
  void batch_device_keys(ops::Cipher cipher, const ops::CipherBatch& host_keys, opkit::DeviceBuffer<std::uint8_t>& in,
                         opkit::DeviceBuffer<std::uint8_t>& out, opkit::DeviceBuffer<std::uint8_t>& back,
                         const Bytes& host_in, const Bytes& want, const Bytes& want_tags, const std::string& shape) {
    const auto& t = ops::cipher_traits(cipher);
    const std::size_t total = host_in.size();
    auto keys = gpu.alloc<std::uint8_t>(host_keys.keys.size()), ivs = gpu.alloc<std::uint8_t>(host_keys.ivs.size());
    keys.copy_from(host_keys.keys);
    ivs.copy_from(host_keys.ivs);
    ops::CipherBatch b = host_keys;
    b.keys = {}, b.ivs = {};
    b.device_keys = std::as_const(keys).view(), b.device_ivs = std::as_const(ivs).view();
    Bytes tags(want_tags.size());
    const opkit::BufferView<const std::uint8_t> src(in.view()), sealed(out.view());
    out.fill(0, &stream);
    const double enc =
        median_ms(gpu, stream, reps, [&] { ops::encrypt_batch(cipher, b, src, out.view(), tags, options()); });
    const bool enc_ok = out.to_host() == want && tags == want_tags;
    back.fill(0, &stream);
    const double dec =
        median_ms(gpu, stream, reps, [&] { ops::decrypt_batch(cipher, b, sealed, back.view(), tags, options()); });
    const bool dec_ok = back.to_host() == host_in;
    row(std::string(t.name), shape, "encrypt-devkeys", total, enc, enc_ok);
    row(std::string(t.name), shape, t.aead ? "decrypt+verify-devkeys" : "decrypt-devkeys", total, dec, dec_ok);
    all_ok = all_ok && enc_ok && dec_ok;
    if (!t.aead) return;
    auto device_tags = gpu.alloc<std::uint8_t>(want_tags.size());
    out.fill(0, &stream);
    const double enc_tags = median_ms(
        gpu, stream, reps, [&] { ops::encrypt_batch(cipher, b, src, out.view(), device_tags.view(), options()); });
    const bool tags_ok = out.to_host() == want && device_tags.to_host() == want_tags;
    row(std::string(t.name), shape, "encrypt-devkeys-devtags", total, enc_tags, tags_ok);
    // Decryption against those device tags: compared on the device, only the verdict comes back.
    back.fill(0, &stream);
    const opkit::BufferView<const std::uint8_t> expected(std::as_const(device_tags).view());
    const double dec_tags =
        median_ms(gpu, stream, reps, [&] { ops::decrypt_batch(cipher, b, sealed, back.view(), expected, options()); });
    const bool dec_tags_ok = back.to_host() == host_in;
    row(std::string(t.name), shape, "decrypt+verify-devkeys-devtags", total, dec_tags, dec_tags_ok);
    all_ok = all_ok && tags_ok && dec_tags_ok;
  }

  // chacha20 with device keys and 12-byte nonces (counter 0): no IV counter to check, so against
  // "encrypt-devkeys" (16-byte IVs, checked on the device, one wait) this row shows that check's
  // cost. Checked against the host path on the same nonces.
  void batch_device_nonces(const ops::CipherBatch& host_keys, opkit::DeviceBuffer<std::uint8_t>& in,
                           opkit::DeviceBuffer<std::uint8_t>& out, const Bytes& host_in, const std::string& shape) {
    Bytes nonces(host_keys.count * 12);
    for (std::size_t i = 0; i < host_keys.count; ++i)
      std::copy_n(host_keys.ivs.begin() + static_cast<std::ptrdiff_t>(16 * i + 4), 12,
                  nonces.begin() + static_cast<std::ptrdiff_t>(12 * i));
    auto keys = gpu.alloc<std::uint8_t>(host_keys.keys.size()), ivs = gpu.alloc<std::uint8_t>(nonces.size());
    keys.copy_from(host_keys.keys);
    ivs.copy_from(std::span<const std::uint8_t>(nonces));
    ops::CipherBatch b = host_keys;
    b.keys = {}, b.ivs = {}, b.iv_bytes = 12;
    b.device_keys = std::as_const(keys).view(), b.device_ivs = std::as_const(ivs).view();
    Bytes want(host_in.size()), none;
    ops::CipherBatch host_nonces = host_keys;
    host_nonces.ivs = nonces, host_nonces.iv_bytes = 12;
    ops::encrypt_batch(ops::Cipher::chacha20, host_nonces, host_in, want, none);
    const opkit::BufferView<const std::uint8_t> src(in.view());
    out.fill(0, &stream);
    const double enc = median_ms(
        gpu, stream, reps, [&] { ops::encrypt_batch(ops::Cipher::chacha20, b, src, out.view(), none, options()); });
    const bool ok = out.to_host() == want;
    row("chacha20", shape, "encrypt-devkeys-nonce12", host_in.size(), enc, ok);
    all_ok = all_ok && ok;
  }

  // Host-resident data: through the device (copy in, encrypt, copy out; not overlapped) against
  // the host path (OpenSSL EVP over all cores), by the wall clock.
  void host_data(ops::Cipher cipher, const Bytes& host_in) {
    const auto& t = ops::cipher_traits(cipher);
    const Bytes key = random_bytes(t.key_bytes, 41), iv = iv_for(cipher, 42);
    Bytes out(host_in.size()), want(host_in.size()), tag(t.aead ? 16 : 0), want_tag(tag.size());
    const double via_device = wall_ms(3, [&] { ops::encrypt(cipher, {key, iv}, host_in, out, tag, {.device = gpu}); });
    const double host = wall_ms(3, [&] { ops::encrypt(cipher, {key, iv}, host_in, want, want_tag); });
    const bool ok = out == want && tag == want_tag;
    const std::string shape = std::to_string(host_in.size() >> 20) + "MiB";
    row(std::string(t.name), shape, "host-via-device", host_in.size(), via_device, ok);
    row(std::string(t.name), shape, "host-openssl", host_in.size(), host, true);
    all_ok = all_ok && ok;
  }

  // The chacha20_xor kernel alone: its 48-byte parameter block (key, counter, nonce) uploaded once.
  // schedule >= 0: compiled with -DCHACHA20_SCHEDULE=schedule (chacha20_bulk.cu), row op
  // "kernel-only-sN"; -1: as the library compiles it.
  void chacha20_kernel_only(const Bytes& host_in, opkit::DeviceBuffer<std::uint8_t>& in,
                            opkit::DeviceBuffer<std::uint8_t>& out, int schedule = -1) {
    const Bytes key = random_bytes(32, 31), iv = iv_for(ops::Cipher::chacha20, 32);
    Bytes params(48);
    std::memcpy(params.data(), key.data(), 32);
    std::memcpy(params.data() + 32, iv.data(), 16);  // counter || nonce, little-endian words as in the IV
    auto device_params = gpu.alloc<std::uint8_t>(48);
    device_params.copy_from(std::span<const std::uint8_t>(params));
    const ops::detail::CipherProgram program{.source = ops::detail::CipherProgram::Source::chacha20_bulk,
                                             .aligned = true};
    std::optional<opkit::Module> variant;
    if (schedule >= 0)
      variant = gpu.compile(ops::chacha20_bulk_program(true, false).define("CHACHA20_SCHEDULE", schedule));
    const opkit::Kernel kernel =
        variant ? variant->kernel("chacha20_xor") : ops::detail::cipher_kernel(gpu, program, "chacha20_xor");
    const opkit::Kernel tail = ops::detail::cipher_kernel(gpu, program, "chacha20_xor_tail");
    const unsigned long long bytes = host_in.size(), blocks = bytes / 64;  // whole blocks; the tail kernel the rest
    const auto grid = static_cast<std::uint32_t>(((blocks + 63) / 64 * 32 + 255) / 256);  // 2 blocks per thread
    const double ms = median_ms(gpu, stream, reps, [&] {
      const auto* src = static_cast<const std::uint8_t*>(in.data());
      const auto* p = static_cast<const std::uint8_t*>(device_params.data());
      if (blocks != 0) kernel.launch({.grid = grid, .block = 256, .stream = &stream}, src, out.data(), blocks, p);
      if (bytes % 64 != 0) tail.launch({.grid = 1, .block = 1, .stream = &stream}, src, out.data(), bytes, p);
    });
    Bytes want(host_in.size()), none;
    ops::encrypt(ops::Cipher::chacha20, {key, iv}, host_in, want, none);
    const bool ok = out.to_host() == want;
    const std::string op = schedule >= 0 ? "kernel-only-s" + std::to_string(schedule) : "kernel-only";
    row("chacha20", std::to_string(host_in.size() >> 20) + "MiB", op.c_str(), host_in.size(), ms, ok);
    all_ok = all_ok && ok;
  }

  // ChaCha20-Poly1305 through the library's launch sequence (cipher/chacha20_device.cpp) with
  // chacha20_bulk.cu compiled as -DPOLY1305_CHAINS=chains: rows "encrypt-cN" and "decrypt-cN"
  // (decrypt: the tag over the input, checked against encrypt's).
  void aead_variant(const Bytes& host_in, opkit::DeviceBuffer<std::uint8_t>& in, opkit::DeviceBuffer<std::uint8_t>& out,
                    opkit::DeviceBuffer<std::uint8_t>& back, int chains) {
    aead_variant(host_in, in, out, back, "POLY1305_CHAINS=" + std::to_string(chains), "-c" + std::to_string(chains));
  }
  // `definition`: NAME=VALUE, or "default" for none; `label` ends the rows' op names.
  void aead_variant(const Bytes& host_in, opkit::DeviceBuffer<std::uint8_t>& in, opkit::DeviceBuffer<std::uint8_t>& out,
                    opkit::DeviceBuffer<std::uint8_t>& back, const std::string& definition, const std::string& label) {
    const Bytes key = random_bytes(32, 61), nonce = random_bytes(12, 62);
    ops::detail::Iv16 iv{};
    std::copy(nonce.begin(), nonce.end(), iv.begin() + 4);  // (counter 0) || nonce
    const auto compile = [&](bool decrypt) {
      opkit::Program program = ops::chacha20_bulk_program(true, decrypt);
      if (definition != "default") define_all(program, definition, "--aead-variants");
      return gpu.compile(program);
    };
    const opkit::Module enc_module = compile(false), dec_module = compile(true);
    Bytes tag(16), dec_tag(16), want(host_in.size()), want_tag(16);
    const auto run = [&](const opkit::Module& module, bool decrypt, const opkit::DeviceBuffer<std::uint8_t>& src,
                         opkit::DeviceBuffer<std::uint8_t>& dst, Bytes& tag_out) {
      ops::detail::chacha20_device_bulk(gpu, true, decrypt, key, iv, {}, static_cast<const std::uint8_t*>(src.data()),
                                        dst.data(), host_in.size(), {tag_out, false}, &stream,
                                        [&](const char* name) { return module.kernel(name); });
    };
    const double enc = median_ms(gpu, stream, reps, [&] { run(enc_module, false, in, out, tag); });
    const double dec = median_ms(gpu, stream, reps, [&] { run(dec_module, true, out, back, dec_tag); });
    ops::encrypt(ops::Cipher::chacha20_poly1305, {key, nonce}, host_in, want, want_tag);
    const bool enc_ok = out.to_host() == want && tag == want_tag;
    const bool dec_ok = back.to_host() == host_in && dec_tag == want_tag;
    const std::string shape = std::to_string(host_in.size() >> 20) + "MiB";
    row("chacha20-poly1305", shape, ("encrypt" + label).c_str(), host_in.size(), enc, enc_ok);
    row("chacha20-poly1305", shape, ("decrypt" + label).c_str(), host_in.size(), dec, dec_ok);
    all_ok = all_ok && enc_ok && dec_ok;
  }
};

void write_cubin(const opkit::Program& program, const std::string& path) {
  const opkit::CompiledProgram compiled = opkit::compile(program, opkit::Target::cuda("sm_90"));
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(compiled.binary.data()),
             static_cast<std::streamsize>(compiled.binary.size()));
  if (!file) throw std::runtime_error("cannot write " + path + " (does its folder exist?)");
  std::printf("wrote %s\n", path.c_str());
}

// "1,2,16" -> {1, 2, 16}.
std::vector<int> int_list(const std::string& text) {
  std::vector<int> values;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    values.push_back(std::stoi(text.substr(at, comma - at)));
    at = comma + 1;
  }
  return values;
}

int run(int argc, char** argv) {
  std::size_t bytes = std::size_t{1} << 30, batch = 1000000, small = 64, packet = 1500;
  int reps = 7;
  std::string device = "cuda:0";
  std::vector<int> schedules;              // --chacha20-schedules 0,1: only the kernel-only rows of those variants
  bool bulk_only = false;                  // --bulk-only 1: the kernel-only row and the bulk rows only
  bool batch_only = false;                 // --batch-only 1: the batch rows only
  std::vector<int> chains;                 // --poly1305-chains 1,16: only the ChaCha20-Poly1305 rows of those variants
  std::vector<std::string> aead_variants;  // --aead-variants A=1,B=2: the same, any definitions
  std::vector<ops::Cipher> ciphers(ops::all_ciphers().begin(), ops::all_ciphers().end());  // --ciphers A,B
  std::vector<ops::aes::BatchIo> aes_ios;            // --aes-batch-io staged,direct: AES batch rows once per IO
  std::vector<int> aes_slices;                       // --aes-slices N,M: AES batch rows once per slice size
  std::vector<ops::aes::GhashEngine> ghash_engines;  // --aes-ghash tensor_cores,horner: GCM bulk rows once per engine
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--device") {
      device = argv[i + 1];
      continue;
    }
    if (a == "--cubins") {
      const std::string dir = argv[i + 1];
      write_cubin(ops::aes::aes_program(), dir + "/aes.cubin");
      write_cubin(ops::chacha20_bulk_program(true, false), dir + "/chacha20_bulk.cubin");
      for (bool aead : {false, true})
        for (bool aligned : {false, true})
          for (bool decrypt : {false, true})
            if (aead || !decrypt)
              write_cubin(ops::chacha20_batch_program(aead, aligned, decrypt),
                          dir + "/chacha20_batch" + (aead ? "_aead" : "") + (aligned ? "_aligned" : "") +
                              (decrypt ? "_decrypt" : "") + ".cubin");
      return 0;
    }
    if (a == "--bulk-only") {
      bulk_only = std::string(argv[i + 1]) == "1";
      continue;
    }
    if (a == "--batch-only") {
      batch_only = std::string(argv[i + 1]) == "1";
      continue;
    }
    if (a == "--poly1305-chains") {
      chains = int_list(argv[i + 1]);
      continue;
    }
    if (a == "--aead-variants") {
      std::stringstream names(argv[i + 1]);
      for (std::string name; std::getline(names, name, ',');) aead_variants.push_back(name);
      continue;
    }
    if (a == "--ciphers") {
      ciphers.clear();
      std::stringstream names(argv[i + 1]);
      for (std::string name; std::getline(names, name, ',');) {
        const std::optional<ops::Cipher> cipher = ops::cipher_from_name(name);
        if (!cipher) throw std::invalid_argument("--ciphers: no cipher named " + name);
        ciphers.push_back(*cipher);
      }
      continue;
    }
    if (a == "--aes-batch-io") {
      std::stringstream names(argv[i + 1]);
      for (std::string name; std::getline(names, name, ',');) {
        if (name != "staged" && name != "direct")
          throw std::invalid_argument("--aes-batch-io: " + name + " is neither staged nor direct");
        aes_ios.push_back(name == "staged" ? ops::aes::BatchIo::staged : ops::aes::BatchIo::direct);
      }
      continue;
    }
    if (a == "--aes-ghash") {
      std::stringstream names(argv[i + 1]);
      for (std::string name; std::getline(names, name, ',');) {
        if (name != "tensor_cores" && name != "horner")
          throw std::invalid_argument("--aes-ghash: " + name + " is neither tensor_cores nor horner");
        ghash_engines.push_back(name == "horner" ? ops::aes::GhashEngine::horner : ops::aes::GhashEngine::tensor_cores);
      }
      continue;
    }
    if (a == "--aes-slices") {
      aes_slices = int_list(argv[i + 1]);
      continue;
    }
    if (a == "--chacha20-schedules") {
      schedules = int_list(argv[i + 1]);
      continue;
    }
    const std::size_t v = std::stoull(argv[i + 1]);
    if (a == "--bytes") bytes = v;
    if (a == "--reps") reps = static_cast<int>(v);
    if (a == "--batch") batch = v;
    if (a == "--small") small = v;
    if (a == "--packet") packet = v;
  }
  if (device == "host") return host_path_rows(random_bytes(bytes, 1), reps) ? 0 : 1;
  const opkit::Device gpu = opkit::Device::parse(device);
  Bench bench{gpu, gpu.create_stream(), reps};
  const Bytes host_in = random_bytes(bytes, 1);
  auto in = bench.gpu.alloc<std::uint8_t>(bytes), out = bench.gpu.alloc<std::uint8_t>(bytes),
       back = bench.gpu.alloc<std::uint8_t>(bytes);
  in.copy_from(std::span<const std::uint8_t>(host_in));
  if (!chains.empty()) {
    for (int c : chains) bench.aead_variant(host_in, in, out, back, c);
    return bench.all_ok ? 0 : 1;
  }
  if (!aead_variants.empty()) {
    for (const std::string& d : aead_variants) bench.aead_variant(host_in, in, out, back, d, "-" + d);
    return bench.all_ok ? 0 : 1;
  }
  if (!schedules.empty()) {
    for (int schedule : schedules) bench.chacha20_kernel_only(host_in, in, out, schedule);
    return bench.all_ok ? 0 : 1;
  }
  if (!batch_only) {
    bench.chacha20_kernel_only(host_in, in, out);
    for (ops::Cipher cipher : ciphers) {
      const bool gcm = cipher == ops::Cipher::aes_128_gcm || cipher == ops::Cipher::aes_256_gcm;
      if (!gcm || ghash_engines.empty()) {
        bench.bulk(cipher, host_in, in, out, back);
        continue;
      }
      for (ops::aes::GhashEngine engine : ghash_engines) {
        ops::aes::set_ghash_engine(engine);
        bench.bulk(cipher, host_in, in, out, back,
                   engine == ops::aes::GhashEngine::horner ? "-horner" : "-tensorcores");
      }
      ops::aes::set_ghash_engine(ops::aes::GhashEngine::tensor_cores);
    }
    if (bulk_only) return bench.all_ok ? 0 : 1;
    for (ops::Cipher cipher : {ops::Cipher::aes_128_ctr, ops::Cipher::aes_256_gcm, ops::Cipher::chacha20_poly1305})
      bench.host_data(cipher, host_in);
    bench.all_ok = host_path_rows(host_in, 3) && bench.all_ok;
  }
  for (std::size_t length : {small, packet}) {
    for (ops::Cipher cipher : ciphers) {
      const bool aes = ops::cipher_traits(cipher).name.substr(0, 3) == "aes";
      if (!aes || (aes_ios.empty() && aes_slices.empty())) {
        bench.batch(cipher, batch, length);
        continue;
      }
      const std::vector<ops::aes::BatchIo> ios = aes_ios.empty() ? std::vector{ops::aes::batch_io()} : aes_ios;
      const std::vector<int> slices = aes_slices.empty() ? std::vector{0} : aes_slices;
      for (ops::aes::BatchIo io : ios) {
        for (int slice : slices) {
          ops::aes::set_batch_io(io);
          ops::aes::set_batch_slice_messages(static_cast<std::size_t>(slice));
          std::string suffix = aes_ios.empty() ? "" : io == ops::aes::BatchIo::staged ? "-staged" : "-direct";
          if (slice != 0) suffix += "-slice" + std::to_string(slice);
          bench.batch(cipher, batch, length, suffix);
        }
      }
      ops::aes::set_batch_slice_messages(0);
    }
  }
  return bench.all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "opkit_cipher_bench: %s\n", e.what());
    return 3;
  }
}
