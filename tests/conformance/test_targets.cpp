// Which targets the suite runs on: every requested target is present (or the skip says why it is
// not), and OPKIT_TEST_DEVICES is parsed as documented in docs/testing.md.
#include <gtest/gtest.h>

#include <iostream>

#include "conformance/devices.hpp"
#include "opkit/registry.hpp"

namespace {

using opkit::test::select_targets;
using opkit::test::selected_targets;

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : "; ") + item;
  return out;
}

TEST(ConformanceTargets, EveryRequestedTargetIsPresent) {
  const auto& selection = selected_targets();
  std::cout << "OPKIT_TEST_DEVICES=" << selection.request << "\n";
  for (const auto& target : selection.present) std::cout << "  runs on " << testing::PrintToString(target) << "\n";
  EXPECT_TRUE(selection.invalid.empty()) << "OPKIT_TEST_DEVICES names no target: " << joined(selection.invalid)
                                         << " (known: host, " << opkit::backend_names() << ", name:N)";
  if (!selection.absent.empty()) GTEST_SKIP() << "not run on " << joined(selection.absent);
}

TEST(ConformanceTargets, RequestListsEachTargetOnceInTheOrderAsked) {
  const auto selection = select_targets("host, cpu,host,,cpu");
  ASSERT_EQ(selection.present.size(), selection.absent.empty() ? 2u : 1u);
  if (selection.present.size() == 2) {
    EXPECT_EQ(selection.present[1].name, "cpu:0");
  }
  EXPECT_EQ(selection.present.front().name, "host");
  EXPECT_TRUE(selection.present.front().is_host());
  EXPECT_TRUE(selection.invalid.empty());
}

TEST(ConformanceTargets, UnknownNamesAreReportedNotIgnored) {
  const auto selection = select_targets("gpu,cuda:x,cuda:-1,host");
  EXPECT_EQ(selection.invalid, (std::vector<std::string>{"gpu", "cuda:x", "cuda:-1"}));
  for (const auto& absent : selection.absent) ADD_FAILURE() << "taken as a device: " << absent;
  ASSERT_EQ(selection.present.size(), 1u);
  EXPECT_EQ(selection.present[0].name, "host");
}

TEST(ConformanceTargets, AGpuThatIsNotThereIsAbsentWithTheReason) {
  const auto selection = select_targets("cuda:999");
  EXPECT_TRUE(selection.present.empty());
  ASSERT_EQ(selection.absent.size(), 1u);
  EXPECT_EQ(selection.absent[0].rfind("cuda:999: ", 0), 0u) << selection.absent[0];
  EXPECT_GT(selection.absent[0].size(), std::string("cuda:999: ").size()) << "no reason given";
}

TEST(ConformanceTargets, DefaultIsEveryDevicePresentPlusHost) {
  const auto selection = select_targets("");
  EXPECT_EQ(selection.request.rfind(",host"), selection.request.size() - 5) << selection.request;
  ASSERT_FALSE(selection.present.empty());
  EXPECT_EQ(selection.present.back().name, "host");
  std::size_t devices = opkit::Device::all().size();  // cpu-serial registered by the selection
  EXPECT_EQ(selection.present.size(), devices + 1);
}

}  // namespace
