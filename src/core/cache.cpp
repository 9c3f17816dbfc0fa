// The on-disk kernel cache. Entries are "<key>.bin" files holding a serialized CompiledProgram
// followed by its SHA-256, written to a temporary file and renamed into place so that concurrent
// processes never see half an entry. Entries that are not ours, or that others could have written,
// are ignored: a shared cache must not let another user inject GPU code.
#include "opkit/cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <system_error>
#include <vector>

#include "openssl_init.hpp"
#include "opkit/hex.hpp"
#include "opkit/sha256_hasher.hpp"
#include "opkit/version.hpp"

namespace opkit {
namespace {

std::filesystem::path default_directory() {
  if (const char* dir = std::getenv("OPKIT_CACHE_DIR"); dir != nullptr && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg)
    return std::filesystem::path(xdg) / "opkit";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home)
    return std::filesystem::path(home) / ".cache" / "opkit";
  return {};
}

// True when the file behind fd is a regular file owned by us that nobody else can write.
bool trustworthy(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

void append_field(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
  out += ';';
}

// The names in the `#include <name>` / `#include "name"` lines of a source.
std::vector<std::string> included_names(const std::string& text) {
  std::vector<std::string> names;
  for (std::size_t line = 0; line < text.size();) {
    const std::size_t end = std::min(text.find('\n', line), text.size());
    std::size_t p = line;
    auto skip_blanks = [&] {
      while (p < end && (text[p] == ' ' || text[p] == '\t')) ++p;
    };
    skip_blanks();
    if (p < end && text[p] == '#') {
      ++p;
      skip_blanks();
      if (text.compare(p, 7, "include") == 0) {
        p += 7;
        skip_blanks();
        if (p < end && (text[p] == '<' || text[p] == '"')) {
          const std::size_t close = text.find_first_of(">\"", p + 1);
          if (close != std::string::npos && close < end && close > p + 1)
            names.push_back(text.substr(p + 1, close - p - 1));
        }
      }
    }
    line = end + 1;
  }
  return names;
}

// Appends every file that the source and in-memory headers reach through #include in the
// include directories (or next to a file found there), recursively. This over-approximates the
// preprocessor (it ignores #if), which only costs a spurious miss, never a stale hit.
void append_included_files(std::string& canon, const ProgramSpec& spec) {
  constexpr std::size_t kMaxFiles = 4096;  // a runaway -I (e.g. /usr/include) must not stall every compile
  std::vector<std::pair<std::string, std::filesystem::path>> pending;  // text, folder it lives in
  pending.emplace_back(spec.source, std::filesystem::path());
  for (const auto& [name, body] : spec.headers) pending.emplace_back(body, std::filesystem::path());
  std::set<std::filesystem::path> seen;
  while (!pending.empty() && seen.size() < kMaxFiles) {
    auto [text, folder] = std::move(pending.back());
    pending.pop_back();
    for (const std::string& included : included_names(text)) {
      std::vector<std::filesystem::path> folders;
      if (!folder.empty()) folders.push_back(folder);
      for (const auto& dir : spec.include_dirs) folders.emplace_back(dir);
      for (const auto& dir : folders) {
        std::error_code ec;
        std::filesystem::path candidate = (dir / included).lexically_normal();
        if (!std::filesystem::is_regular_file(candidate, ec) || !seen.insert(candidate).second) continue;
        std::ifstream in(candidate, std::ios::binary);
        std::ostringstream body;
        body << in.rdbuf();
        std::string field = "F";
        field.append(candidate.string()).append(1, '\n').append(body.str());
        append_field(canon, field);
        pending.emplace_back(body.str(), candidate.parent_path());
      }
    }
  }
}

}  // namespace

// Destroyed at exit after the compile queue (core/compile_queue.cpp), which is made after it and
// so joins its compiles, the last users of the cache, first.
KernelCache& KernelCache::global() {
  // First, so that OpenSSL (which hashes every entry) is set up before the cache and outlives it.
  detail::init_openssl();
  static KernelCache cache([] {
    const char* flag = std::getenv("OPKIT_CACHE");
    if (flag != nullptr && std::string_view(flag) == "0") {
      KernelCache off = disabled();
      off.disabled_reason_ = "disabled by OPKIT_CACHE=0";
      return off;
    }
    std::filesystem::path dir = default_directory();
    if (dir.empty()) {
      KernelCache off = disabled();
      off.disabled_reason_ = "no cache directory: set OPKIT_CACHE_DIR, XDG_CACHE_HOME or HOME";
      return off;
    }
    return KernelCache(dir);
  }());
  return cache;
}

KernelCache KernelCache::disabled() {
  return KernelCache();
}

KernelCache::KernelCache(std::filesystem::path directory) : directory_(std::move(directory)), enabled_(true) {
  std::error_code ec;
  bool created = std::filesystem::create_directories(directory_, ec);
  if (ec) {
    enabled_ = false;
    disabled_reason_ = "cannot create " + directory_.string() + ": " + ec.message();
    return;
  }
  // Only a directory we made is tightened: an existing one (perhaps $HOME) keeps its mode, and is
  // refused below if others can write to it.
  if (created) ::chmod(directory_.c_str(), 0700);
  struct stat st {};
  if (::stat(directory_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    enabled_ = false;
    disabled_reason_ = directory_.string() + " is not a directory";
  } else if (st.st_uid != geteuid()) {
    enabled_ = false;
    disabled_reason_ = directory_.string() + " belongs to another user; set OPKIT_CACHE_DIR to a directory of your own";
  } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    enabled_ = false;
    disabled_reason_ = directory_.string() + " is writable by others; chmod 700 it or choose another OPKIT_CACHE_DIR";
  } else if (::access(directory_.c_str(), W_OK | X_OK) != 0) {
    enabled_ = false;
    disabled_reason_ = directory_.string() + " is not writable: " + std::generic_category().message(errno);
  }
}

std::string KernelCache::key(const ProgramSpec& spec, std::string_view target_identity) {
  std::string canon = "opkit-cache-v1;";
  append_field(canon, version);
  append_field(canon, target_identity);
  append_field(canon, spec.name);
  append_field(canon, spec.source);
  // Every field is tagged by its kind; `field` is reused so that hashing a spec allocates little.
  std::string field;
  auto append_tagged = [&](char tag, std::initializer_list<std::string_view> parts) {
    field.assign(1, tag);
    for (std::string_view part : parts) field.append(part);
    append_field(canon, field);
  };
  for (const auto& [k, v] : spec.defines) append_tagged('D', {k, "=", v});
  for (const auto& o : spec.options) append_tagged('O', {o});
  for (const auto& d : spec.include_dirs) append_tagged('I', {d});
  for (const auto& [n, body] : spec.headers) append_tagged('H', {n, "\n", body});
  for (const auto& e : spec.name_expressions) append_tagged('N', {e});
  if (!spec.include_dirs.empty()) append_included_files(canon, spec);
  return to_hex(Sha256Hasher().digest(canon));
}

std::filesystem::path KernelCache::entry_path(const std::string& key) const {
  return directory_ / (key + ".bin");
}

std::optional<CompiledProgram> KernelCache::load(const std::string& key) const {
  if (!enabled_) return std::nullopt;
  std::filesystem::path path = entry_path(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::vector<std::uint8_t> bytes;
  if (trustworthy(fd)) {
    std::uint8_t chunk[65536];
    for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
  }
  ::close(fd);
  if (bytes.size() < 32) return std::nullopt;
  std::string_view payload(reinterpret_cast<const char*>(bytes.data()), bytes.size() - 32);
  const Sha256Digest digest = Sha256Hasher().digest(payload);
  if (std::memcmp(digest.data(), bytes.data() + payload.size(), 32) != 0) return std::nullopt;
  bytes.resize(payload.size());
  CompiledProgram program;
  if (!CompiledProgram::deserialize(bytes, program)) return std::nullopt;
  return program;
}

KernelCache::StoreResult KernelCache::store(const std::string& key, const CompiledProgram& program) const {
  if (!enabled_) return {false, disabled_reason_};
  std::vector<std::uint8_t> bytes = program.serialize();
  const Sha256Digest digest = Sha256Hasher().digest(bytes);
  bytes.insert(bytes.end(), digest.begin(), digest.end());

  std::string tmp = (directory_ / (key + ".tmp.XXXXXX")).string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    return {false, "cannot create a file in " + directory_.string() + ": " + std::generic_category().message(errno)};
  }
  ::fchmod(fd, 0600);
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  bool ok = written == bytes.size();
  if (::close(fd) != 0) ok = false;
  if (!ok || ::rename(tmp.c_str(), entry_path(key).c_str()) != 0) {
    StoreResult failed{
        false, "cannot write a cache entry in " + directory_.string() + ": " + std::generic_category().message(errno)};
    ::unlink(tmp.c_str());
    return failed;
  }
  return {true, {}};
}

}  // namespace opkit
