// Key bytes for `opkit encrypt|decrypt`, from hex or a key file, wiped when dropped.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace opkit::cli {

// Key bytes, wiped (OPENSSL_cleanse) on destruction.
class SecretBytes {
 public:
  static SecretBytes from_hex(const std::string& hex, const char* what);
  static SecretBytes from_file(const std::string& path);
  SecretBytes(SecretBytes&&) noexcept = default;
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;
  ~SecretBytes();
  std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

 private:
  explicit SecretBytes(std::vector<std::uint8_t> bytes) : bytes_(std::move(bytes)) {}
  std::vector<std::uint8_t> bytes_;
};

}  // namespace opkit::cli
