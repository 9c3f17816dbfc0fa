// TempDir: mkdtemp + std::filesystem (see temp_dir.hpp).
#include "temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "opkit/error.hpp"

namespace opkit::cpu {

TempDir::TempDir(const char* prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw Error(Errc::io, "CPU backend",
                "cannot create a temporary directory " + pattern + ": " + std::generic_category().message(errno));
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void TempDir::write(std::string_view relative, std::string_view content) const {
  std::filesystem::path rel(relative);
  bool escapes = rel.empty() || rel.is_absolute();
  for (const auto& part : rel) escapes = escapes || part == "..";
  if (escapes)
    throw Error(Errc::invalid_argument, "CPU backend",
                "header name '" + std::string(relative) + "' must be a relative path without '..'");
  std::filesystem::path full = std::filesystem::path(path_) / rel;
  std::error_code ec;
  std::filesystem::create_directories(full.parent_path(), ec);
  std::ofstream out(full, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (ec || !out) throw Error(Errc::io, "CPU backend", "cannot write " + full.string());
}

std::vector<std::uint8_t> TempDir::read(std::string_view relative) const {
  std::ifstream in(file(relative), std::ios::binary);
  if (!in) throw Error(Errc::io, "CPU backend", "cannot read " + file(relative));
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace opkit::cpu
