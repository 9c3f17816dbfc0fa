// The CUDA libraries visible on this machine's library path, for `opkit doctor`'s check for
// several CUDA installs (the classic source of "it works in one shell and not in another").
#pragma once

#include <string>
#include <vector>

namespace opkit::doctor::detail {

struct LibraryCopy {
  std::string library;    // "libnvrtc" or "libcudart"
  std::string version;    // from the real file's name: "13.0.88", or "13" when only the soname is known
  std::string path;       // the real path, symlinks resolved
  std::string found_via;  // "LD_LIBRARY_PATH", "ld.so.conf", "default", "CUDA_HOME", "default toolkit"
};

// Every distinct libnvrtc.so.* / libcudart.so.* (by real path) in the folders the dynamic loader
// searches: LD_LIBRARY_PATH, /etc/ld.so.conf (with its includes), the default folders, and
// $CUDA_HOME / $CUDA_PATH's lib64 and lib, /usr/local/cuda/lib64 (where opkit looks last). Reads the file system only;
// executes nothing.
std::vector<LibraryCopy> visible_cuda_libraries();

// Whether two versions name the same CUDA release: "13.0.88" and "13.0.48" do, "13" and "13.0.88"
// do (a bare soname version says only the major), "12.4" and "13.0" do not.
bool same_release(const std::string& a, const std::string& b);

}  // namespace opkit::doctor::detail
