// The targets the conformance suite runs on, picked by OPKIT_TEST_DEVICES: devices of every
// backend, and "host", each operator's native CPU path (OpenSSL for SHA-256, the CPU miner for
// mining). Resolved once per process, before GoogleTest instantiates the suites.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "opkit/device.hpp"

namespace opkit::test {

struct Target {
  std::string name;              // "cuda:0", "cpu:0", "host": Device::id(), or host
  std::optional<Device> device;  // none for host
  bool is_host() const { return !device.has_value(); }
};

struct TargetSelection {
  std::string request;               // the OPKIT_TEST_DEVICES value, or the default
  std::vector<Target> present;       // in the order asked, each once
  std::vector<std::string> absent;   // "cuda: <why there is none>"
  std::vector<std::string> invalid;  // names that name nothing
};

// OPKIT_TEST_DEVICES: comma-separated names in the device vocabulary of Device::parse
// (`cuda:1`, `cpu`, `cpu-serial:0`), a bare backend name meaning each of its devices (`cuda`:
// every CUDA GPU), and `host`. Unset or empty: every registered backend, then host.
TargetSelection select_targets(const std::string& request);
// select_targets(OPKIT_TEST_DEVICES), once per process.
const TargetSelection& selected_targets();

// The present targets, as suites are instantiated over them: all of them, or the devices only
// (for tests of kernel-language semantics, which host has no notion of).
std::vector<Target> all_targets();
std::vector<Target> device_targets();

// "cuda:0" -> "cuda_0": a GoogleTest parameter name.
std::string target_test_name(const testing::TestParamInfo<Target>& info);
void PrintTo(const Target& target, std::ostream* os);

// A conformance suite's fixture: GetParam() is the target.
class TargetTest : public testing::TestWithParam<Target> {
 protected:
  const Target& target() const { return GetParam(); }
};

}  // namespace opkit::test

// Declares the suite `Suite` run on every selected target (OPKIT_CONFORMANCE_DEVICE_SUITE: on
// every device, not host). An operator adds itself with one of these and its TEST_P cases.
// Suite and device are names being declared, which parentheses would not allow:
// NOLINTBEGIN(bugprone-macro-parentheses)
#define OPKIT_CONFORMANCE_SUITE_OVER(Suite, targets)    \
  class Suite : public ::opkit::test::TargetTest {};    \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Suite); \
  INSTANTIATE_TEST_SUITE_P(On, Suite, ::testing::ValuesIn(::opkit::test::targets()), ::opkit::test::target_test_name)
#define OPKIT_CONFORMANCE_SUITE(Suite) OPKIT_CONFORMANCE_SUITE_OVER(Suite, all_targets)
// An operator's suite: every target, each test skipped where `support` (the operator's
// opkit::KernelSupport) has no kernel for the target's backend.
#define OPKIT_CONFORMANCE_OPERATOR_SUITE(Suite, support)                                 \
  class Suite : public ::opkit::test::TargetTest {                                       \
   protected:                                                                            \
    void SetUp() override { OPKIT_SKIP_UNLESS_TARGET_RUNS(support); }                    \
  };                                                                                     \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Suite);                                  \
  INSTANTIATE_TEST_SUITE_P(On, Suite, ::testing::ValuesIn(::opkit::test::all_targets()), \
                           ::opkit::test::target_test_name)
#define OPKIT_CONFORMANCE_DEVICE_SUITE(Suite) OPKIT_CONFORMANCE_SUITE_OVER(Suite, device_targets)

// Skips where the target's backend has no kernel in the operator's kernel set `support` (an
// opkit::KernelSupport); host runs every operator on its native path.
#define OPKIT_SKIP_UNLESS_TARGET_RUNS(support)                       \
  if (target().device && !(support).has(target().device->backend())) \
  GTEST_SKIP() << target().device->backend() << " has no " << (support).op() << " kernel"

// Declares `const opkit::Device& device` for the test body, or skips on host saying why.
#define OPKIT_DEVICE_OR_SKIP(device, why)                          \
  if (target().is_host()) GTEST_SKIP() << "host has no " << (why); \
  const ::opkit::Device& device = *target().device
// NOLINTEND(bugprone-macro-parentheses)
