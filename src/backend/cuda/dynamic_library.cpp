// dlopen-based loading of the CUDA driver and NVRTC.
#include "dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

namespace opkit::cuda {

bool DynamicLibrary::open_first(const std::vector<std::string>& names, std::string& reason) {
  for (const auto& name : names) {
    dlerror();
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      link_map* map = nullptr;
      path = (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name && *map->l_name) ? map->l_name
                                                                                                           : name;
      return true;
    }
    const char* why = dlerror();
    if (!reason.empty()) reason += "; ";
    reason += why != nullptr ? why : name + ": cannot be loaded";
  }
  return false;
}

void* DynamicLibrary::symbol(const char* name) const {
  return handle != nullptr ? dlsym(handle, name) : nullptr;
}

}  // namespace opkit::cuda
