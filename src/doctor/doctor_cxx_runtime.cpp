// See doctor_cxx_runtime.hpp. The probe is the classic locale, std::locale::classic()'s object:
// every C++ runtime keeps one in its own static storage, and which copy opkit's code reaches is
// exactly what goes wrong. (The object, not the function's address: a function pointer can be a
// PLT stub in the executable.)
#include "doctor_cxx_runtime.hpp"

#include <dlfcn.h>

#include <locale>

namespace opkit::doctor::detail {
namespace {

// The file (shared object or executable) that holds `address`; "" if the loader does not know.
std::string file_of(const void* address) {
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

// A shared C++ runtime: GNU libstdc++ or LLVM libc++.
bool is_shared_runtime(const std::string& file) {
  return file.find("libstdc++.so") != std::string::npos || file.find("libc++.so") != std::string::npos;
}

}  // namespace

CxxRuntimes find_cxx_runtimes() {
  CxxRuntimes found;
  // Inside libstdc++.so.6 when opkit links the shared runtime, inside opkit's own binary when it
  // carries a static copy.
  found.ours = file_of(&std::locale::classic());
#ifdef __GLIBCXX__
  // RTLD_NOLOAD: only look at a libstdc++.so.6 that something has already loaded.
  if (void* handle = ::dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD); handle != nullptr) {
    using Classic = const std::locale& (*)();
    if (auto classic = reinterpret_cast<Classic>(::dlsym(handle, "_ZNSt6locale7classicEv")); classic != nullptr)
      found.shared = file_of(&classic());
    ::dlclose(handle);
  }
#endif
  return found;
}

Check cxx_runtime_check(const CxxRuntimes& found) {
  Check c;
  c.name = "c++ runtime";
  c.facts.emplace_back("opkit_runtime", found.ours);
  c.facts.emplace_back("shared_libstdcxx", found.shared);
  const bool ours_shared = found.ours.empty() || is_shared_runtime(found.ours) || found.ours == found.shared;
  if (ours_shared) {
    c.detail = found.ours.empty() ? "one C++ runtime (its file is unknown to the loader)" : "one: " + found.ours;
  } else if (found.shared.empty()) {
    c.detail = "a static libstdc++ inside " + found.ours + ", alone in this process";
  } else {
    c.status = Status::warn;
    c.detail = "two: a static libstdc++ inside " + found.ours + " and " + found.shared;
    c.cause =
        "opkit was linked with libstdc++.a while another library loaded libstdc++.so.6; locale-dependent code "
        "(number formatting, std::regex) can then crash, as the Python package did after `import torch`";
    c.fix =
        "rebuild opkit against the shared libstdc++ (its CLI and Python builds do so through "
        "cmake/SharedLibstdcxx.cmake; `g++ -print-file-name=libstdc++.so` should name an existing file)";
  }
  return c;
}

}  // namespace opkit::doctor::detail
