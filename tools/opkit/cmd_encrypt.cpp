// `opkit encrypt|decrypt --cipher C (-K HEX | --key-file F) --iv HEX [IN [OUT]]`: byte-identical
// to `openssl enc -C -K HEX -iv HEX` (no salt, no KDF) for aes-*-ctr and chacha20, streamed in
// bounded memory. AEADs (aes-*-gcm, chacha20-poly1305) write ciphertext then the 16-byte tag (or
// the tag to --tag-out); decryption reads the tag from the input's last bytes (or --tag-in) and
// writes nothing unless it verifies (exit 1, "authentication failed"). Ctrl-C or SIGTERM stops
// between pieces (exit 130, saying how far it got); OUT is then not written.
#include <openssl/crypto.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_device.hpp"
#include "cli_input_file.hpp"
#include "cli_output_file.hpp"
#include "cli_secret_bytes.hpp"
#include "cli_stop_signals.hpp"
#include "commands.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "opkit/ops/cipher.hpp"

namespace opkit::cli {
namespace {

struct CipherCommand {
  bool encrypt = true;
  std::string cipher, key_hex, key_file, iv_hex, aad_file, tag_out, tag_in, device = "host";
  bool json = false;
  std::string in = "-", out = "-";
};

std::string command_name(const CipherCommand& c) {
  return c.encrypt ? "opkit encrypt" : "opkit decrypt";
}

// Ctrl-C / SIGTERM, checked after each read: main turns Errc::interrupted into exit 130; the
// unwinding OutputFile removes its temporary, so OUT is not written.
void stop_if_requested(const CipherCommand& c, std::size_t bytes_done) {
  if (!stop_requested()) return;
  throw Error(Errc::interrupted, command_name(c),
              "interrupted after " + std::to_string(bytes_done) + " bytes; " +
                  (c.out == "-" ? "stdout has what was written so far" : "the output was not written"));
}

// Streaming piece: a multiple of every keystream block size.
constexpr std::size_t piece_bytes = std::size_t{16} << 20;

// auto is host: the data is in host files, and OpenSSL over the host's cores (about 100 GB/s
// for AES-CTR on 16 cores) outruns a round trip over PCIe (about 50 GB/s each way) whatever
// the GPU's own rate. A named device runs the operator's kernels there.
ops::CipherOptions options_for(const std::string& device, const std::string& command) {
  ops::CipherOptions options;
  const DeviceRequest request = parse_device_option(device, command.c_str(), {.host = true});
  if (request.kind == DeviceRequest::Kind::devices) {
    ops::cipher_support().require(request.devices.front());
    options.device = request.devices.front();
  }
  return options;
}

std::size_t stream_cipher(const CipherCommand& c, ops::Cipher cipher, const SecretBytes& key,
                          const std::vector<std::uint8_t>& iv, const ops::CipherOptions& options) {
  if (iv.size() != 16)
    throw Error(Errc::invalid_argument, "--iv",
                std::string(ops::cipher_traits(cipher).name) + " takes a 16-byte IV (32 hex digits), got " +
                    std::to_string(iv.size()) + " bytes");
  InputFile input(c.in);
  OutputFile output(c.out);
  std::vector<std::uint8_t> buffer(piece_bytes);
  std::size_t total = 0;
  const std::size_t block = ops::cipher_traits(cipher).block_bytes;
  for (;;) {
    const std::size_t n = input.read_full(buffer);
    stop_if_requested(c, total);
    if (n == 0) break;
    const auto piece_iv = ops::keystream_iv_at(cipher, std::span<const std::uint8_t, 16>(iv.data(), 16), total / block);
    std::span<std::uint8_t> piece(buffer.data(), n);
    ops::encrypt(cipher, {key.bytes(), piece_iv}, piece, piece, {}, options);
    output.write(piece);
    total += n;
    if (n < buffer.size()) break;
  }
  output.commit();
  return total;
}

std::size_t aead(const CipherCommand& c, ops::Cipher cipher, const SecretBytes& key,
                 const std::vector<std::uint8_t>& iv, const ops::CipherOptions& options) {
  const std::vector<std::uint8_t> aad = c.aad_file.empty() ? std::vector<std::uint8_t>{} : read_whole_file(c.aad_file);
  std::vector<std::uint8_t> data = read_whole_file(c.in);
  stop_if_requested(c, 0);  // nothing is encrypted from a partial read
  std::vector<std::uint8_t> tag(ops::aead_tag_bytes);
  if (c.encrypt) {
    ops::encrypt(cipher, {key.bytes(), iv, aad}, data, data, tag, options);
    OutputFile output(c.out);
    output.write(data);
    if (c.tag_out.empty()) output.write(tag);
    output.commit();
    if (!c.tag_out.empty()) {
      OutputFile tag_file(c.tag_out);
      tag_file.write(tag);
      tag_file.commit();
    }
    return data.size();
  }
  if (!c.tag_in.empty()) {
    tag = read_whole_file(c.tag_in);
    if (tag.size() != ops::aead_tag_bytes)
      throw Error(Errc::invalid_argument, "--tag-in",
                  "the tag file holds " + std::to_string(tag.size()) + " bytes, not 16");
  } else {
    if (data.size() < ops::aead_tag_bytes)
      throw Error(Errc::invalid_argument, "decrypt",
                  "the input (" + std::to_string(data.size()) + " bytes) is shorter than the 16-byte tag");
    tag.assign(data.end() - ops::aead_tag_bytes, data.end());
    data.resize(data.size() - ops::aead_tag_bytes);
  }
  ops::decrypt(cipher, {key.bytes(), iv, aad}, data, data, tag, options);  // throws before anything is written
  OutputFile output(c.out);
  output.write(data);
  output.commit();
  OPENSSL_cleanse(data.data(), data.size());
  return data.size();
}

void run(const CipherCommand& c, int& exit_code) {
  const auto cipher = ops::cipher_from_name(c.cipher);
  if (!cipher) throw Error(Errc::invalid_argument, "--cipher", "unknown cipher '" + c.cipher + "'");
  if (c.key_hex.empty() == c.key_file.empty())
    throw Error(Errc::invalid_argument, command_name(c), "give the key as exactly one of -K HEX or --key-file FILE");
  if (c.json && c.out == "-")
    throw Error(Errc::invalid_argument, "--json", "--json needs an OUT file (stdout is JSON)");
  const bool is_aead = ops::cipher_traits(*cipher).aead;
  if (!is_aead && (!c.aad_file.empty() || !c.tag_out.empty() || !c.tag_in.empty()))
    throw Error(Errc::invalid_argument, "opkit", c.cipher + " takes no --aad-file, --tag-out or --tag-in");
  const SecretBytes key =
      c.key_file.empty() ? SecretBytes::from_hex(c.key_hex, "-K") : SecretBytes::from_file(c.key_file);
  if (key.bytes().size() != ops::cipher_traits(*cipher).key_bytes)
    throw Error(Errc::invalid_argument, "key",
                c.cipher + " needs a " + std::to_string(ops::cipher_traits(*cipher).key_bytes) + "-byte key (" +
                    std::to_string(2 * ops::cipher_traits(*cipher).key_bytes) + " hex digits), got " +
                    std::to_string(key.bytes().size()) + " bytes");
  const std::vector<std::uint8_t> iv = opkit::parse_hex(c.iv_hex, "--iv");
  const ops::CipherOptions options = options_for(c.device, command_name(c));
  const StopSignals stop;  // Ctrl-C / SIGTERM: checked after each read
  const auto start = std::chrono::steady_clock::now();
  std::size_t bytes = 0;
  try {
    bytes = is_aead ? aead(c, *cipher, key, iv, options) : stream_cipher(c, *cipher, key, iv, options);
  } catch (const ops::AuthenticationError&) {
    std::fprintf(stderr,
                 "opkit: decrypt: authentication failed (wrong key, IV, AAD or tag, or altered data); "
                 "nothing written\n");
    exit_code = 1;
    return;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (c.json) {
    const nlohmann::json report = {{"cipher", c.cipher}, {"operation", c.encrypt ? "encrypt" : "decrypt"},
                                   {"device", c.device}, {"bytes", bytes},
                                   {"seconds", seconds}, {"gb_per_s", seconds > 0 ? bytes / seconds / 1e9 : 0.0}};
    std::printf("%s\n", report.dump().c_str());
  }
  exit_code = 0;
}

void add_cipher_command(CLI::App& app, int& exit_code, bool encrypt) {
  auto command = std::make_shared<CipherCommand>();
  command->encrypt = encrypt;
  CLI::App* sub = app.add_subcommand(
      encrypt ? "encrypt" : "decrypt",
      encrypt ? "Encrypt like `openssl enc -CIPHER -K HEX -iv HEX` (CTR, chacha20); AEADs append a 16-byte tag"
              : "Decrypt like `openssl enc -d` (CTR, chacha20); AEADs verify the trailing tag before writing");
  std::vector<std::string> names;
  for (ops::Cipher c : ops::all_ciphers()) names.emplace_back(ops::cipher_traits(c).name);
  sub->add_option("--cipher", command->cipher, "aes-128|192|256-ctr, aes-128|192|256-gcm, chacha20, chacha20-poly1305")
      ->required()
      ->check(CLI::IsMember(names, CLI::ignore_case));
  sub->add_option("-K,--key", command->key_hex, "the key in hex (as openssl enc -K)");
  sub->add_option("--key-file", command->key_file, "a file holding the raw key bytes");
  sub->add_option("--iv", command->iv_hex,
                  "IV in hex: 16 bytes for CTR and chacha20 (counter || nonce, as openssl), the nonce for AEADs")
      ->required();
  sub->add_option("--aad-file", command->aad_file, "AEAD: additional authenticated data");
  if (encrypt)
    sub->add_option("--tag-out", command->tag_out, "AEAD: write the 16-byte tag here instead of after the ciphertext");
  else
    sub->add_option("--tag-in", command->tag_in, "AEAD: read the tag from here instead of the input's last 16 bytes");
  sub->add_option("--device", command->device,
                  "host (OpenSSL, default), cpu / cpu:0 (the CPU backend running the kernel source), cuda / cuda:N");
  sub->add_flag("--json", command->json, "print bytes, seconds and GB/s as JSON on stdout (needs OUT)");
  sub->add_option("IN", command->in, "input file (- or none: standard input)");
  sub->add_option("OUT", command->out, "output file, written to a temporary and renamed (- or none: stdout)");
  sub->callback([command, &exit_code] { run(*command, exit_code); });
}

}  // namespace

void add_encrypt_command(CLI::App& app, int& exit_code) {
  add_cipher_command(app, exit_code, true);
  add_cipher_command(app, exit_code, false);
}

}  // namespace opkit::cli
