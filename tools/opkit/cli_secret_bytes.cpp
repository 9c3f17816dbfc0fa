// See cli_secret_bytes.hpp.
#include "cli_secret_bytes.hpp"

#include <openssl/crypto.h>

#include "cli_input_file.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"

namespace opkit::cli {

SecretBytes SecretBytes::from_hex(const std::string& hex, const char* what) {
  return SecretBytes(opkit::parse_hex(hex, what));
}

SecretBytes SecretBytes::from_file(const std::string& path) {
  // A key is at most 32 bytes; reading a little more says "too long" without draining a device
  // such as /dev/zero into memory.
  InputFile in(path);
  std::vector<std::uint8_t> bytes(256);
  bytes.resize(in.read_full(bytes));
  if (bytes.size() == 256) {
    OPENSSL_cleanse(bytes.data(), bytes.size());
    throw Error(Errc::invalid_argument, path, "a key file holds the raw key bytes (at most 32); this one is longer");
  }
  return SecretBytes(std::move(bytes));
}

SecretBytes::~SecretBytes() {
  if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
}

}  // namespace opkit::cli
