// Finds the copies of NVRTC and the CUDA runtime the dynamic loader could pick, by walking the
// folders it searches (what `ldconfig -p` and LD_LIBRARY_PATH would show) without running anything.
#include "doctor_installs.hpp"

#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace opkit::doctor::detail {
namespace {

namespace fs = std::filesystem;

struct Folder {
  std::string path;
  std::string found_via;
};

void add_path_list(std::vector<Folder>& folders, const char* list, const std::string& via) {
  if (list == nullptr) return;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ':');)
    if (!item.empty()) folders.push_back({item, via});
}

// /etc/ld.so.conf: one folder per line, `include <glob>` pulls in more files, '#' starts a comment.
void add_ld_so_conf(std::vector<Folder>& folders, const std::string& file, int depth) {
  std::ifstream in(file);
  if (!in || depth > 4) return;
  for (std::string line; std::getline(in, line);) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::stringstream words(line);
    std::string first, rest;
    words >> first;
    if (first.empty()) continue;
    if (first == "include") {
      while (words >> rest) {
        std::string pattern = rest[0] == '/' ? rest : (fs::path(file).parent_path() / rest).string();
        glob_t matches{};
        // NOLINTNEXTLINE(concurrency-mt-unsafe): the doctor reads ld.so.conf on one thread
        if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0)
          for (std::size_t i = 0; i < matches.gl_pathc; ++i) add_ld_so_conf(folders, matches.gl_pathv[i], depth + 1);
        ::globfree(&matches);
      }
    } else if (first[0] == '/') {
      folders.push_back({first, "ld.so.conf"});
    }
  }
}

// "libnvrtc.so.13.0.88" -> "13.0.88"; "" for anything else (builtins, alt, stubs).
std::string version_of(const std::string& library, const std::string& file_name) {
  std::string prefix = library + ".so.";
  if (file_name.rfind(prefix, 0) != 0) return {};
  std::string version = file_name.substr(prefix.size());
  if (version.empty() || version.find_first_not_of("0123456789.") != std::string::npos) return {};
  return version;
}

}  // namespace

bool same_release(const std::string& a, const std::string& b) {
  auto parts = [](const std::string& v) {
    std::vector<std::string> out;
    std::stringstream in(v);
    for (std::string part; std::getline(in, part, '.');) out.push_back(part);
    return out;
  };
  auto pa = parts(a), pb = parts(b);
  std::size_t compared = std::min({pa.size(), pb.size(), std::size_t{2}});
  for (std::size_t i = 0; i < compared; ++i)
    if (pa[i] != pb[i]) return false;
  return true;
}

std::vector<LibraryCopy> visible_cuda_libraries() {
  std::vector<Folder> folders;
  add_path_list(folders, std::getenv("LD_LIBRARY_PATH"), "LD_LIBRARY_PATH");
  add_ld_so_conf(folders, "/etc/ld.so.conf", 0);
  for (const char* dir : {"/lib", "/usr/lib", "/lib64", "/usr/lib64"}) folders.push_back({dir, "default"});
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var); root != nullptr && *root)
      for (const char* sub : {"lib64", "lib"}) folders.push_back({(fs::path(root) / sub).string(), var});
  folders.push_back({"/usr/local/cuda/lib64", "default toolkit"});  // opkit's own last resort for NVRTC

  std::vector<LibraryCopy> copies;
  std::set<std::string> seen;
  for (const auto& folder : folders) {
    std::error_code ec;
    for (fs::directory_iterator it(folder.path, ec), end; !ec && it != end; it.increment(ec)) {
      std::string name = it->path().filename().string();
      for (const char* library : {"libnvrtc", "libcudart"}) {
        if (version_of(library, name).empty()) continue;
        std::error_code rec;
        fs::path real = fs::canonical(it->path(), rec);
        if (rec || !seen.insert(real.string()).second) continue;
        std::string version = version_of(library, real.filename().string());
        if (version.empty()) version = version_of(library, name);
        copies.push_back({library, version, real.string(), folder.found_via});
      }
    }
  }
  return copies;
}

}  // namespace opkit::doctor::detail
