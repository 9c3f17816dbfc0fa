// Host compiler discovery: a PATH search (no shell) and one `--version` run.
#include "host_compiler.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <vector>

#include "opkit/error.hpp"
#include "process.hpp"

namespace opkit::cpu {
namespace {

bool executable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

// `name` itself when it has a slash, else the first executable of that name on PATH.
std::optional<std::string> resolve(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (!executable(name)) return std::nullopt;
    if (name.front() == '/') return name;
    char cwd[4096];
    return getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) + "/" + name : name;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

HostCompiler identify(const std::string& path) {
  HostCompiler cxx;
  cxx.path = path;
  ProcessResult r = run_captured({path, "--version"});
  if (r.exit_code != 0)
    throw Error(Errc::unavailable, "CPU backend", path + " --version failed (exit " + std::to_string(r.exit_code) + ")")
        .with_log(r.output);
  cxx.version_output = r.output;
  std::string first_line = r.output.substr(0, r.output.find('\n'));
  // `c++ --version` of GCC says "c++ (Debian 12.2.0-14) 12.2.0" and the FSF's copyright.
  if (r.output.find("clang") != std::string::npos)
    cxx.family = "clang++";
  else if (r.output.find("Free Software Foundation") != std::string::npos)
    cxx.family = "g++";
  else
    cxx.family = "c++";
  // The first whole word shaped like N.N[.N]: "g++ (Debian 12.2.0-14) 12.2.0" gives 12.2.0.
  std::size_t start = 0;
  while (start < first_line.size() && cxx.version.empty()) {
    std::size_t end = first_line.find(' ', start);
    if (end == std::string::npos) end = first_line.size();
    std::string word = first_line.substr(start, end - start);
    bool numeric = !word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) &&
                   word.find('.') != std::string::npos && word.find_first_not_of("0123456789.") == std::string::npos;
    if (numeric) cxx.version = word;
    start = end + 1;
  }
  return cxx;
}

HostCompiler find() {
  if (const char* env = std::getenv("OPKIT_CXX"); env != nullptr && *env != '\0') {
    auto path = resolve(env);
    if (!path)
      throw Error(Errc::unavailable, "CPU backend",
                  std::string("OPKIT_CXX=") + env + " is not an executable (a path, or a name on PATH; no arguments)");
    return identify(*path);
  }
  for (const char* name : {"c++", "g++", "clang++"})
    if (auto path = resolve(name)) return identify(*path);
  throw Error(Errc::unavailable, "CPU backend",
              "no host C++ compiler found: set OPKIT_CXX, or put c++, g++ or clang++ on PATH");
}

}  // namespace

std::string HostCompiler::description() const {
  return family + (version.empty() ? "" : " " + version) + " (" + path + ")";
}

const HostCompiler& host_compiler() {
  // Never destroyed: compiles on other threads may still ask for it while the process exits.
  static auto* mutex = new std::mutex;
  static auto* found = new std::optional<HostCompiler>;
  std::lock_guard lock(*mutex);
  if (!*found) *found = find();
  return **found;
}

}  // namespace opkit::cpu
