// A kernel shared object loaded from bytes in memory: an anonymous memfd (or, where memfd_create
// is missing, a file in a private 0700 directory) opened with dlopen. The backing file stays open
// until dlclose, so that no later load can reuse its path (glibc would return the old library).
#pragma once

#include <cstddef>
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
  // Where the object was loaded: a symbol's st_value plus this is its address.
  std::uintptr_t base() const noexcept { return base_; }

  // Whether `pc` is in the object's executable segments: there runs the kernel's code (its CUDA
  // source and the shim's inline functions), which takes no lock, so a stopped kernel may be left
  // at any such address. Async-signal-safe (reads what the constructor recorded).
  bool contains_code(const void* pc) const noexcept;
  // Bytes of the object's thread-local segment (PT_TLS): the kernels' static __shared__ variables
  // and the shim's few launch variables.
  std::size_t tls_bytes() const noexcept { return tls_bytes_; }

 private:
  void release() noexcept;
  void record_segments();

  void* handle_ = nullptr;
  int fd_ = -1;
  std::string file_;  // only for the temporary-file fallback
  std::string dir_;
  static constexpr std::size_t kMaxCodeRanges = 4;
  std::uintptr_t code_begin_[kMaxCodeRanges] = {}, code_end_[kMaxCodeRanges] = {};
  std::size_t code_ranges_ = 0;
  std::size_t tls_bytes_ = 0;
  std::uintptr_t base_ = 0;
};

}  // namespace opkit::cpu
