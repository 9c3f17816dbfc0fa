// KernelCache: compiled programs on disk, keyed by the SHA-256 of everything that changes the
// binary. Directory: $OPKIT_CACHE_DIR, else $XDG_CACHE_HOME/opkit, else ~/.cache/opkit;
// OPKIT_CACHE=0 disables it. The cache is an optimisation: its failures never fail a compile.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "opkit/program.hpp"

namespace opkit {

class KernelCache {
 public:
  // The process-wide cache configured from the environment (read once).
  static KernelCache& global();

  explicit KernelCache(std::filesystem::path directory);
  static KernelCache disabled();

  bool enabled() const noexcept { return enabled_; }
  const std::filesystem::path& directory() const noexcept { return directory_; }

  // Hex SHA-256 over the spec and the target identity (compiler version, arch, opkit version).
  // With include directories, the files the source reaches through #include in them are part
  // of the key too, so editing a header recompiles.
  static std::string key(const ProgramSpec& spec, std::string_view target_identity);

  // Where the entry for `key` lives (whether or not it exists).
  std::filesystem::path entry_path(const std::string& key) const;

  // A missing, damaged, foreign-owned or world-writable entry is a miss.
  std::optional<CompiledProgram> load(const std::string& key) const;
  // What store() did. The error travels with the result, not in the cache, because one cache is
  // shared by every thread of the process.
  struct StoreResult {
    bool stored = false;
    std::string error;  // why not stored ("" when stored)
    explicit operator bool() const noexcept { return stored; }
  };

  // Writes atomically (temporary file + rename). Safe to call from several threads at once.
  StoreResult store(const std::string& key, const CompiledProgram& program) const;

  // Why the cache is disabled ("" when enabled). Fixed at construction.
  const std::string& last_error() const noexcept { return disabled_reason_; }

 private:
  KernelCache() = default;
  std::filesystem::path directory_;
  bool enabled_ = false;
  std::string disabled_reason_;
};

}  // namespace opkit
