// opkit::doctor::examine(): the report's shape on any machine, what it says without a GPU, and
// the version logic behind the "several CUDA installs" check. Fault injection (a bad OPKIT_NVRTC,
// an unusable cache directory) needs a fresh process per case: tests/cli/test_doctor.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "doctor/doctor_cxx_runtime.hpp"
#include "doctor/doctor_installs.hpp"
#include "opkit/device.hpp"
#include "opkit/doctor.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/registry.hpp"

namespace {

using opkit::doctor::Check;
using opkit::doctor::Status;

const Check* find(const opkit::doctor::Report& report, const std::string& name) {
  auto it = std::find_if(report.checks.begin(), report.checks.end(), [&](const Check& c) { return c.name == name; });
  return it == report.checks.end() ? nullptr : &*it;
}

TEST(Doctor, ReportsTheCoreChecksEachWithADetail) {
  auto report = opkit::doctor::examine({.smoke = false, .require_gpu = false});
  for (const char* name :
       {"driver", "nvrtc", "driver vs nvrtc", "cuda installs", "headers", "cache", "cpu backend", "c++ runtime"})
    EXPECT_NE(find(report, name), nullptr) << "no check named " << name;
  for (const auto& c : report.checks) {
    EXPECT_FALSE(c.detail.empty()) << c.name;
    if (c.status == Status::warn || c.status == Status::fail) {
      EXPECT_FALSE(c.cause.empty()) << c.name << " is " << opkit::doctor::status_name(c.status) << " without a cause";
      EXPECT_FALSE(c.fix.empty()) << c.name << " is " << opkit::doctor::status_name(c.status) << " without a fix";
    }
  }
}

TEST(Doctor, NvrtcCheckMatchesNvrtcInfo) {
  auto info = opkit::nvrtc::info();
  auto report = opkit::doctor::examine({.smoke = false, .require_gpu = false});
  const Check* nvrtc = find(report, "nvrtc");
  ASSERT_NE(nvrtc, nullptr);
  if (info.available) {
    EXPECT_EQ(nvrtc->status, Status::ok);
    EXPECT_NE(nvrtc->detail.find(info.path), std::string::npos) << nvrtc->detail;
    EXPECT_EQ(find(report, "headers")->status, Status::ok) << find(report, "headers")->cause;
  } else {
    EXPECT_EQ(nvrtc->status, Status::fail);
    EXPECT_EQ(nvrtc->cause, info.reason);
    EXPECT_EQ(find(report, "headers")->status, Status::skip);
  }
}

TEST(Doctor, WithoutAGpuSaysSoAndWhyAndRequireGpuTurnsThatIntoAFailure) {
  if (!opkit::Device::all("cuda").empty()) GTEST_SKIP() << "this machine has a GPU";
  auto relaxed = opkit::doctor::examine({.smoke = false, .require_gpu = false});
  const Check* gpu = find(relaxed, "gpu");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->status, Status::skip);
  EXPECT_NE(gpu->detail.find("no CUDA GPU"), std::string::npos) << gpu->detail;
  EXPECT_EQ(relaxed.working_gpus, 0);
  EXPECT_EQ(relaxed.any_backend_works(), !opkit::Device::all("cpu").empty());

  auto strict = opkit::doctor::examine({.smoke = false, .require_gpu = true});
  const Check* required = find(strict, "gpu");
  ASSERT_NE(required, nullptr);
  EXPECT_EQ(required->status, Status::fail);
  EXPECT_FALSE(required->fix.empty());
}

TEST(Doctor, StatusNamesAreTheDocumentedOnes) {
  EXPECT_STREQ(opkit::doctor::status_name(Status::ok), "ok");
  EXPECT_STREQ(opkit::doctor::status_name(Status::warn), "warn");
  EXPECT_STREQ(opkit::doctor::status_name(Status::fail), "fail");
  EXPECT_STREQ(opkit::doctor::status_name(Status::skip), "skip");
}

TEST(DoctorInstalls, ReleasesCompareByMajorAndMinorOnly) {
  using opkit::doctor::detail::same_release;
  EXPECT_TRUE(same_release("13.0.88", "13.0.48"));
  EXPECT_TRUE(same_release("13", "13.0.88"));  // a bare soname only says the major
  EXPECT_TRUE(same_release("12.4", "12.4.127"));
  EXPECT_FALSE(same_release("12.4.127", "13.0.88"));
  EXPECT_FALSE(same_release("12.4", "12.8"));
  EXPECT_FALSE(same_release("12", "13"));
}

TEST(DoctorInstalls, FindsTheNvrtcThatOpkitLoaded) {
  auto info = opkit::nvrtc::info();
  if (!info.available) GTEST_SKIP() << "NVRTC not available: " << info.reason;
  auto copies = opkit::doctor::detail::visible_cuda_libraries();
  std::error_code ec;
  auto loaded = std::filesystem::canonical(info.path, ec);
  if (ec) GTEST_SKIP() << "cannot resolve " << info.path;
  bool found = std::any_of(copies.begin(), copies.end(), [&](const auto& c) { return c.path == loaded.string(); });
  // OPKIT_NVRTC may point outside the library path; otherwise the loader's own choice must be listed.
  if (std::getenv("OPKIT_NVRTC") == nullptr) {
    EXPECT_TRUE(found) << loaded << " was not found on the library path";
  }
}

TEST(DoctorCxxRuntime, ThisTestLinksTheSharedRuntimeAndTheCheckSaysOne) {
  const auto found = opkit::doctor::detail::find_cxx_runtimes();
  EXPECT_NE(found.ours.find(".so"), std::string::npos) << "the tests link libstdc++.so.6: " << found.ours;
  EXPECT_EQ(found.ours, found.shared);  // the runtime the tests call is the loaded libstdc++.so.6
  const Check c = opkit::doctor::detail::cxx_runtime_check(found);
  EXPECT_EQ(c.status, Status::ok) << c.detail;
  EXPECT_EQ(c.detail, "one: " + found.ours);
}

TEST(DoctorCxxRuntime, StaticCopyIsFineAloneAndAWarningBesideTheSharedOne) {
  using opkit::doctor::detail::cxx_runtime_check;
  const Check alone = cxx_runtime_check({.ours = "/opt/bin/opkit", .shared = ""});
  EXPECT_EQ(alone.status, Status::ok);
  EXPECT_NE(alone.detail.find("static libstdc++ inside /opt/bin/opkit, alone"), std::string::npos) << alone.detail;

  const Check two = cxx_runtime_check({.ours = "/site/opkit/_opkit.so", .shared = "/usr/lib/libstdc++.so.6"});
  EXPECT_EQ(two.status, Status::warn);
  EXPECT_NE(two.detail.find("/site/opkit/_opkit.so"), std::string::npos) << two.detail;
  EXPECT_NE(two.detail.find("/usr/lib/libstdc++.so.6"), std::string::npos) << two.detail;
  EXPECT_NE(two.cause.find("libstdc++.a"), std::string::npos) << two.cause;
  EXPECT_FALSE(two.fix.empty());

  EXPECT_EQ(cxx_runtime_check({.ours = "/usr/lib/libc++.so.1", .shared = ""}).status, Status::ok);
  EXPECT_EQ(cxx_runtime_check({.ours = "/usr/lib/libstdc++.so.6", .shared = "/usr/lib/libstdc++.so.6"}).status,
            Status::ok);
}

}  // namespace
