// Files, keys and devices for `opkit encrypt|decrypt`: hex parsing that never echoes key digits,
// key bytes wiped when dropped, inputs read in pieces, outputs written to a temporary and renamed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "opkit/device.hpp"

namespace opkit::cli {

// Hex digits to bytes; Error(invalid_argument) naming `what` (never the digits) when malformed.
std::vector<std::uint8_t> parse_hex(const std::string& hex, const char* what);

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

// A whole file ("-": standard input); Error(not_found) when it cannot be opened.
std::vector<std::uint8_t> read_whole_file(const std::string& path);

class InputFile {
 public:
  explicit InputFile(const std::string& path);  // "-": standard input
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  // Fills buffer unless the input ends first; returns the bytes read.
  std::size_t read_full(std::span<std::uint8_t> buffer);

 private:
  std::string path_;
  std::FILE* file_;
};

// Writes to a temporary next to `path` and renames it there on commit(); dropped without commit,
// the temporary is removed and `path` is untouched. "-": standard output, written directly.
class CipherOutput {
 public:
  explicit CipherOutput(const std::string& path);
  ~CipherOutput();
  CipherOutput(const CipherOutput&) = delete;
  CipherOutput& operator=(const CipherOutput&) = delete;
  void write(std::span<const std::uint8_t> bytes);
  void commit();

 private:
  std::string path_, temp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// "cpu", "cpu:0" (the CPU backend), "cuda", "cuda:N".
Device parse_device(const std::string& id);

}  // namespace opkit::cli
