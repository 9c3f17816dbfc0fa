// SharedObject: memfd_create + dlopen("/proc/self/fd/N") (see shared_object.hpp).
#include "shared_object.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "opkit/error.hpp"

namespace opkit::cpu {
namespace {

bool write_all(int fd, const std::vector<std::uint8_t>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

SharedObject::SharedObject(const std::vector<std::uint8_t>& bytes) {
  std::string path;
  fd_ = memfd_create("opkit-cpu-kernel", MFD_CLOEXEC);
  if (fd_ >= 0) {
    path = "/proc/self/fd/" + std::to_string(fd_);
    if (access(path.c_str(), R_OK) != 0) {  // no /proc: fall back to a file
      close(fd_);
      fd_ = -1;
    }
  }
  if (fd_ < 0) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/opkit-cpu-so-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr)
      throw Error(Errc::load, "CPU backend",
                  "cannot create a directory for a kernel object: " + std::generic_category().message(errno));
    dir_ = pattern;
    file_ = dir_ + "/kernel.so";
    fd_ = open(file_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
    path = file_;
  }
  if (fd_ < 0 || !write_all(fd_, bytes)) {
    std::string why = std::generic_category().message(errno);
    release();
    throw Error(Errc::load, "CPU backend", "cannot write the kernel object: " + why);
  }
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    std::string message = why != nullptr ? why : "dlopen failed";
    if (message.find("__asan") != std::string::npos || message.find("__ubsan") != std::string::npos)
      message += " (kernels built with OPKIT_CPU_SANITIZE need a host program built with that sanitizer)";
    release();
    throw Error(Errc::load, "dlopen", message);
  }
  record_segments();
}

// From the loader's program headers of this object (matched by its link map's base and name).
void SharedObject::record_segments() {
  link_map* map = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return;
  base_ = map->l_addr;
  struct Search {
    const link_map* map;
    SharedObject* self;
  } search{map, this};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* raw) {
        auto* s = static_cast<Search*>(raw);
        if (info->dlpi_addr != s->map->l_addr || info->dlpi_name == nullptr ||
            std::strcmp(info->dlpi_name, s->map->l_name) != 0)
          return 0;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_TLS) s->self->tls_bytes_ = ph.p_memsz;
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0 || s->self->code_ranges_ == kMaxCodeRanges) continue;
          s->self->code_begin_[s->self->code_ranges_] = info->dlpi_addr + ph.p_vaddr;
          s->self->code_end_[s->self->code_ranges_++] = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
        }
        return 1;
      },
      &search);
}

bool SharedObject::contains_code(const void* pc) const noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(pc);
  for (std::size_t i = 0; i < code_ranges_; ++i)
    if (address >= code_begin_[i] && address < code_end_[i]) return true;
  return false;
}

SharedObject::~SharedObject() {
  release();
}

void SharedObject::release() noexcept {
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (!file_.empty()) unlink(file_.c_str());
  if (!dir_.empty()) rmdir(dir_.c_str());
  file_.clear();
  dir_.clear();
}

void* SharedObject::symbol(const char* name) const {
  return dlsym(handle_, name);
}

}  // namespace opkit::cpu
