// A private (0700) scratch directory, removed with everything in it when the object dies.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opkit::cpu {

class TempDir {
 public:
  // Created under $TMPDIR (else /tmp) as <prefix><pid>-XXXXXX. Throws Error(Errc::io) on failure.
  // The first one of a process removes such folders that dead processes left (temp_dir.cpp).
  explicit TempDir(const char* prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const noexcept { return path_; }
  std::string file(std::string_view relative) const { return path_ + "/" + std::string(relative); }

  // Writes a file; `relative` may contain directories ("ops/sha256.cuh") but must stay inside:
  // an absolute name or a ".." component throws Error(Errc::invalid_argument).
  void write(std::string_view relative, std::string_view content) const;
  std::vector<std::uint8_t> read(std::string_view relative) const;

 private:
  std::string path_;
};

}  // namespace opkit::cpu
