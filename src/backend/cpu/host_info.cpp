// Processor and memory facts from /proc and sysconf (see host_info.hpp).
#include "host_info.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "kernel_compiler.hpp"

namespace opkit::cpu {
namespace {

std::size_t pages_to_bytes(long pages) {
  long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    std::size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  return host_arch() + " CPU";
}

std::size_t total_memory_bytes() {
  return pages_to_bytes(sysconf(_SC_PHYS_PAGES));
}

std::size_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    return static_cast<std::size_t>(std::strtoull(line.c_str() + 13, nullptr, 10)) * 1024;  // in kB
  }
  return pages_to_bytes(sysconf(_SC_AVPHYS_PAGES));
}

}  // namespace opkit::cpu
