// Files, keys and devices for `opkit encrypt|decrypt` (see cli_cipher_io.hpp).
#include "cli_cipher_io.hpp"

#include <openssl/crypto.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "opkit/error.hpp"

namespace opkit::cli {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::FILE* open_input(const std::string& path) {
  if (path == "-") return stdin;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw Error(Errc::not_found, path, std::string("cannot open: ") + std::strerror(errno));
  return file;
}

}  // namespace

std::vector<std::uint8_t> parse_hex(const std::string& hex, const char* what) {
  if (hex.size() % 2 != 0)
    throw Error(Errc::invalid_argument, what, "an odd number of hex digits (" + std::to_string(hex.size()) + ")");
  std::vector<std::uint8_t> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      OPENSSL_cleanse(out.data(), out.size());
      throw Error(Errc::invalid_argument, what, "not a hex string (a character other than 0-9, a-f, A-F)");
    }
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

SecretBytes SecretBytes::from_hex(const std::string& hex, const char* what) {
  return SecretBytes(parse_hex(hex, what));
}

SecretBytes SecretBytes::from_file(const std::string& path) {
  return SecretBytes(read_whole_file(path));
}

SecretBytes::~SecretBytes() {
  if (!bytes_.empty()) OPENSSL_cleanse(bytes_.data(), bytes_.size());
}

std::vector<std::uint8_t> read_whole_file(const std::string& path) {
  InputFile in(path);
  std::vector<std::uint8_t> data;
  std::vector<std::uint8_t> piece(std::size_t{1} << 20);
  for (;;) {
    const std::size_t n = in.read_full(piece);
    data.insert(data.end(), piece.begin(), piece.begin() + static_cast<std::ptrdiff_t>(n));
    if (n < piece.size()) break;
  }
  return data;
}

InputFile::InputFile(const std::string& path) : path_(path), file_(open_input(path)) {}

InputFile::~InputFile() {
  if (file_ != stdin) std::fclose(file_);
}

std::size_t InputFile::read_full(std::span<std::uint8_t> buffer) {
  std::size_t got = 0;
  while (got < buffer.size()) {
    const std::size_t n = std::fread(buffer.data() + got, 1, buffer.size() - got, file_);
    got += n;
    if (n == 0) {
      if (std::ferror(file_)) throw Error(Errc::io, path_, std::string("read failed: ") + std::strerror(errno));
      break;
    }
  }
  return got;
}

CipherOutput::CipherOutput(const std::string& path) : path_(path) {
  if (path == "-") {
    file_ = stdout;
    return;
  }
  temp_ = path + ".opkit-XXXXXX";
  const int fd = mkstemp(temp_.data());
  if (fd < 0) throw Error(Errc::io, path, std::string("cannot create a temporary next to it: ") + std::strerror(errno));
  file_ = fdopen(fd, "wb");
  if (file_ == nullptr) {
    ::close(fd);
    std::remove(temp_.c_str());
    throw Error(Errc::io, path, std::string("fdopen failed: ") + std::strerror(errno));
  }
}

CipherOutput::~CipherOutput() {
  if (file_ == stdout || file_ == nullptr) return;
  std::fclose(file_);
  if (!committed_) std::remove(temp_.c_str());
}

void CipherOutput::write(std::span<const std::uint8_t> bytes) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw Error(Errc::io, path_, std::string("write failed: ") + std::strerror(errno));
}

void CipherOutput::commit() {
  if (std::fflush(file_) != 0) throw Error(Errc::io, path_, std::string("write failed: ") + std::strerror(errno));
  if (file_ == stdout) return;
  if (std::fclose(file_) != 0) {
    file_ = nullptr;
    std::remove(temp_.c_str());
    throw Error(Errc::io, path_, std::string("write failed: ") + std::strerror(errno));
  }
  file_ = nullptr;
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    std::remove(temp_.c_str());
    throw Error(Errc::io, path_, std::string("cannot rename the temporary into place: ") + std::strerror(errno));
  }
  committed_ = true;
}

Device parse_device(const std::string& id) {
  if (id == "cpu" || id == "cpu:0") return Device::cpu();
  if (id == "cuda") return Device::cuda(0);
  if (id.rfind("cuda:", 0) == 0 && id.size() > 5 && id.find_first_not_of("0123456789", 5) == std::string::npos)
    return Device::cuda(std::stoi(id.substr(5)));
  throw Error(Errc::invalid_argument, "--device", "unknown device '" + id + "' (host, cpu, cpu:0, cuda, cuda:N)");
}

}  // namespace opkit::cli
