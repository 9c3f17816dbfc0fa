// The NVRTC wheels' install locations (see pip_nvrtc.hpp). CuPy and PyTorch look in the same
// places; only site-packages folders are searched, never a whole file system.
#include "pip_nvrtc.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace opkit::cuda {
namespace {

namespace fs = std::filesystem;

// site-packages / dist-packages folders below an environment prefix (lib/python3.*/...).
void add_prefix_sites(const fs::path& prefix, std::vector<fs::path>& sites) {
  std::error_code ec;
  const fs::path lib = prefix / "lib";
  if (!fs::is_directory(lib, ec)) return;
  for (const auto& entry : fs::directory_iterator(lib, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("python3")) continue;
    for (const char* leaf : {"site-packages", "dist-packages"})
      if (fs::is_directory(entry.path() / leaf, ec)) sites.push_back(entry.path() / leaf);
  }
}

std::vector<fs::path> site_folders() {
  std::vector<fs::path> sites;
  if (const char* list = std::getenv("OPKIT_SITE_PACKAGES"); list != nullptr) {
    std::string_view rest(list);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      if (std::string_view folder = rest.substr(0, colon); !folder.empty()) sites.emplace_back(folder);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* prefix = std::getenv(var); prefix != nullptr && *prefix) add_prefix_sites(prefix, sites);
  std::error_code ec;
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)  // <prefix>/bin/opkit
    add_prefix_sites(exe.parent_path().parent_path(), sites);
  if (const char* home = std::getenv("HOME"); home != nullptr && *home)
    add_prefix_sites(fs::path(home) / ".local", sites);
  add_prefix_sites("/usr/local", sites);
  return sites;
}

}  // namespace

std::vector<std::string> pip_nvrtc_candidates() {
  std::vector<std::string> found;
  std::error_code ec;
  for (const fs::path& site : site_folders()) {
    for (const char* relative : {"nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cuda_nvrtc/lib/libnvrtc.so.13",
                                 "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"}) {
      const fs::path candidate = site / relative;
      if (fs::is_regular_file(candidate, ec)) found.push_back(candidate.string());
    }
  }
  return found;
}

}  // namespace opkit::cuda
