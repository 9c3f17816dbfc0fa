// The NVRTC that `pip install nvidia-cuda-nvrtc` puts in a Python environment is found without
// OPKIT_NVRTC (issue 16 #21: doctor recommended that install, and then nothing found it): the
// wheels' layouts under site-packages folders named by OPKIT_SITE_PACKAGES (the Python package
// sets it from sys.path) and under $VIRTUAL_ENV, in that order; a folder without it adds nothing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend/cuda/pip_nvrtc.hpp"

namespace {

namespace fs = std::filesystem;

// Sets an environment variable for the test's duration, restoring the old value. The test's
// thread is the only one reading the environment meanwhile, so setenv's thread-unsafety is moot.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);  // NOLINT(concurrency-mt-unsafe): see above
  }
  ~ScopedEnv() {
    if (old_.empty())
      unsetenv(name_);  // NOLINT(concurrency-mt-unsafe)
    else
      setenv(name_, old_.c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
};

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "not really a library";
}

TEST(PipNvrtc, WheelLayoutsInSitePackagesAndTheVirtualEnvAreFoundInOrder) {
  const fs::path root = fs::temp_directory_path() / ("opkit-pip-nvrtc-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path site = root / "site";  // as from sys.path
  const fs::path venv = root / "venv";
  const fs::path cu13 = site / "nvidia/cu13/lib/libnvrtc.so.13";
  const fs::path cu12 = venv / "lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12";
  touch(cu13);
  touch(cu12);
  fs::create_directories(root / "empty");
  {
    ScopedEnv sites("OPKIT_SITE_PACKAGES", (root / "empty").string() + ":" + site.string());
    ScopedEnv env("VIRTUAL_ENV", venv.string());
    const std::vector<std::string> found = opkit::cuda::pip_nvrtc_candidates();
    const auto at = [&](const fs::path& p) { return std::find(found.begin(), found.end(), p.string()); };
    ASSERT_NE(at(cu13), found.end()) << "the CUDA 13 wheel in a site-packages folder";
    ASSERT_NE(at(cu12), found.end()) << "the CUDA 12 wheel in the virtual environment";
    EXPECT_LT(at(cu13), at(cu12)) << "OPKIT_SITE_PACKAGES comes first";
  }
  fs::remove_all(root);
}

}  // namespace
