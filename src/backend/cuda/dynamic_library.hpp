// dlopen/dlsym with error text, shared by the driver and NVRTC loaders. Libraries stay loaded for
// the life of the process (unloading the CUDA driver while contexts exist is never safe).
#pragma once

#include <string>
#include <vector>

namespace opkit::cuda {

struct DynamicLibrary {
  void* handle = nullptr;
  std::string path;  // the real path of the loaded file, where it can be found

  // Tries each name in turn; on failure returns false and appends "name: dlerror" per attempt.
  bool open_first(const std::vector<std::string>& names, std::string& reason);
  // The symbol's address, or nullptr.
  void* symbol(const char* name) const;
};

}  // namespace opkit::cuda
