// A kernel shared object loaded from bytes in memory: an anonymous memfd (or, where memfd_create
// is missing, a file in a private 0700 directory) opened with dlopen. The backing file stays open
// until dlclose, so that no later load can reuse its path (glibc would return the old library).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace opkit::cpu {

class SharedObject {
 public:
  // Throws Error(Errc::load) with dlerror()'s text when the bytes do not load.
  explicit SharedObject(const std::vector<std::uint8_t>& bytes);
  ~SharedObject();
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  void* symbol(const char* name) const;  // nullptr when absent

 private:
  void release() noexcept;

  void* handle_ = nullptr;
  int fd_ = -1;
  std::string file_;  // only for the temporary-file fallback
  std::string dir_;
};

}  // namespace opkit::cpu
