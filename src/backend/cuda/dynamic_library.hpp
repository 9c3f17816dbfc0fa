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

  // Points `slot` at the symbol `name`; when it is missing, appends the name to `missing`
  // (comma-separated) so one message can list everything an old library lacks.
  template <class Fn>
  void bind(Fn& slot, const char* name, std::string& missing) const {
    slot = reinterpret_cast<Fn>(symbol(name));
    if (slot == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
  }
};

}  // namespace opkit::cuda
