// TempDir: mkdtemp + std::filesystem (see temp_dir.hpp).
#include "temp_dir.hpp"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <system_error>

#include "opkit/error.hpp"

namespace opkit::cpu {

namespace {

// Leftovers of processes that died without cleaning up (kill -9, a SIGTERM to a program that does
// not handle it): `<prefix><pid>-XXXXXX` folders of this user whose process is gone and which
// nobody has touched for an hour (another PID namespace sharing this folder may see pids that this
// one does not). Once per process and prefix; failures are ignored.
void remove_leftovers(const std::string& base, const std::string& prefix) {
  const auto stale_before = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* rest = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &rest, 10);
    struct stat info;
    if (pid <= 0 || rest == nullptr || *rest != '-' || lstat(it->path().c_str(), &info) != 0 ||
        !S_ISDIR(info.st_mode) || info.st_uid != geteuid())
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to know)
    std::error_code age_error;
    if (std::filesystem::last_write_time(it->path(), age_error) > stale_before || age_error) continue;
    std::error_code ignored;
    std::filesystem::remove_all(it->path(), ignored);
  }
}

}  // namespace

TempDir::TempDir(const char* prefix) {
  const char* env = std::getenv("TMPDIR");
  const std::string base = env != nullptr && *env != '\0' ? env : "/tmp";
  static std::mutex swept_mutex;
  static std::set<std::string> swept;
  {
    std::lock_guard lock(swept_mutex);
    if (swept.insert(base + "/" + prefix).second) remove_leftovers(base, prefix);
  }
  std::string pattern = base + "/" + prefix + std::to_string(getpid()) + "-XXXXXX";
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
  errno = 0;
  std::ofstream out(full, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  // The stream keeps no reason; errno holds the last failure's (ENOSPC for a full disk).
  if (ec || !out)
    throw Error(Errc::io, "CPU backend",
                "cannot write " + full.string() + (errno != 0 ? ": " + std::generic_category().message(errno) : ""));
}

std::vector<std::uint8_t> TempDir::read(std::string_view relative) const {
  std::ifstream in(file(relative), std::ios::binary);
  if (!in) throw Error(Errc::io, "CPU backend", "cannot read " + file(relative));
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace opkit::cpu
