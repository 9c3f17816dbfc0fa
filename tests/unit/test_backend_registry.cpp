// The backend registry and the one device vocabulary: built-in backends listed, names parsed
// with errors that list the valid ones, a backend registered from the test tree alone
// (tests/backends/cpu_serial) found, enumerated and running kernels, and kernel sets that skip
// or refuse a backend they have no kernel for.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu_serial/cpu_serial.hpp"
#include "opkit/backend.hpp"
#include "opkit/opkit.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/ops/sha256.hpp"

namespace {

opkit::Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const opkit::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no opkit::Error was thrown";
  return opkit::Error(opkit::Errc::runtime, "test", "none");
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& b : opkit::backends()) out.push_back(b.name);
  return out;
}

TEST(BackendRegistry, ListsTheBuiltInBackendsFirstWithWhetherTheyWork) {
  const auto list = opkit::backends();
  ASSERT_GE(list.size(), 2u);
  EXPECT_EQ(list[0].name, "cuda");
  EXPECT_TRUE(list[0].is_gpu);
  EXPECT_EQ(list[1].name, "cpu");
  EXPECT_TRUE(list[1].available);
  EXPECT_FALSE(list[1].is_gpu);
  for (const auto& b : list) EXPECT_EQ(b.reason.empty(), b.available) << b.name;
}

TEST(BackendRegistry, ParsesTheDeviceVocabulary) {
  EXPECT_EQ(opkit::Device::parse("cpu").id(), "cpu:0");
  EXPECT_EQ(opkit::Device::parse("cpu:0"), opkit::Device::cpu());
  EXPECT_EQ(opkit::Device::parse("auto"), opkit::Device::best());
  if (opkit::Device::all("cuda").empty()) {
    const opkit::Error e = error_of([] { opkit::Device::parse("cuda:1"); });
    EXPECT_EQ(e.kind(), opkit::Errc::unavailable);
  }
}

TEST(BackendRegistry, BadDeviceNamesAreErrorsThatNameTheValueAndTheChoices) {
  const opkit::Error unknown = error_of([] { opkit::Device::parse("tpu:0"); });
  EXPECT_EQ(unknown.kind(), opkit::Errc::invalid_argument);
  EXPECT_TRUE(has(unknown.message(), "'tpu:0'")) << unknown.message();
  EXPECT_TRUE(has(unknown.message(), "auto, cuda, cuda:N, cpu, cpu:N")) << unknown.message();
  for (const char* bad : {"cpu:", "cpu:x", "cpu:-1", "cpu:1x"}) {
    const opkit::Error e = error_of([&] { opkit::Device::parse(bad); });
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument) << bad;
    EXPECT_TRUE(has(e.message(), bad)) << e.message();
  }
  EXPECT_EQ(error_of([] { opkit::Device::parse("cpu:3"); }).kind(), opkit::Errc::unavailable);
  EXPECT_EQ(error_of([] { opkit::Device::all("tpu"); }).kind(), opkit::Errc::invalid_argument);
}

// A backend with nothing behind it: enough to be refused or accepted by name.
class NamedOnly final : public opkit::backend::Backend {
 public:
  explicit NamedOnly(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  bool is_gpu() const override { return false; }
  int dlpack_device_type() const override { return 1; }
  std::string kernel_language() const override { return "none"; }
  bool available() override { return false; }
  std::string unavailable_reason() override { return "a test stand-in"; }
  int device_count() override { return 0; }
  std::shared_ptr<opkit::backend::Device> device(int) override {
    throw opkit::Error(opkit::Errc::unavailable, name_, unavailable_reason());
  }
  opkit::CompiledProgram compile(const opkit::ProgramSpec&, const std::string&) override {
    throw opkit::Error(opkit::Errc::unavailable, name_, unavailable_reason());
  }
  std::string compiler_identity(const std::string&) override { return name_; }

 private:
  std::string name_;
};

TEST(BackendRegistry, RefusesNamesThatAreTakenMalformedOrReserved) {
  const auto before = names();
  for (const char* bad : {"auto", "all", "host", "cpu", "cuda", "", "Upper", "has space", "-dash", "a:1"}) {
    const opkit::Error e = error_of([&] { opkit::register_backend(std::make_shared<NamedOnly>(bad)); });
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument) << bad;
  }
  EXPECT_EQ(error_of([] { opkit::register_backend(nullptr); }).kind(), opkit::Errc::invalid_argument);
  EXPECT_EQ(names(), before);
  opkit::test::register_cpu_serial_backend();
  const auto with_serial = names();
  opkit::test::register_cpu_serial_backend();  // once per process: a second call adds nothing
  EXPECT_EQ(names(), with_serial);
}

TEST(BackendRegistry, AnUnavailableBackendIsListedWithItsReasonAndHasNoDevices) {
  static const bool registered = [] {
    opkit::register_backend(std::make_shared<NamedOnly>("stand-in"));
    return true;
  }();
  ASSERT_TRUE(registered);
  const auto list = opkit::backends();
  const auto it = std::find_if(list.begin(), list.end(), [](const auto& b) { return b.name == "stand-in"; });
  ASSERT_NE(it, list.end());
  EXPECT_FALSE(it->available);
  EXPECT_EQ(it->reason, "a test stand-in");
  EXPECT_TRUE(opkit::Device::all("stand-in").empty());
  const opkit::Error e = error_of([] { opkit::Device::parse("stand-in:0"); });
  EXPECT_EQ(e.kind(), opkit::Errc::unavailable);
  EXPECT_TRUE(has(e.message(), "a test stand-in")) << e.message();
  EXPECT_FALSE(opkit::ops::sha256_support().has("stand-in"));  // its language is not CUDA C++
}

TEST(BackendRegistry, ABackendFromTheTestTreeIsListedParsedAndEnumerated) {
  opkit::test::register_cpu_serial_backend();
  const auto list = names();
  EXPECT_EQ(std::count(list.begin(), list.end(), "cpu-serial"), 1);
  opkit::Device serial = opkit::Device::parse("cpu-serial:0");
  EXPECT_EQ(serial, opkit::Device::parse("cpu-serial"));
  EXPECT_EQ(serial.backend(), "cpu-serial");
  EXPECT_EQ(serial.id(), "cpu-serial:0");
  EXPECT_FALSE(serial.is_gpu());
  EXPECT_EQ(serial.info().compute_units, 1);
  const auto all = opkit::Device::all();
  EXPECT_EQ(std::count(all.begin(), all.end(), serial), 1);
  EXPECT_EQ(opkit::Device::all("cpu-serial"), std::vector<opkit::Device>{serial});
  EXPECT_EQ(opkit::Device::best().backend() == "cpu-serial", false);  // the CPU backend comes first
}

// Each block takes a ticket on entry: blocks run one after another in order exactly when block
// b's ticket is b and every block saw the previous one finish (its done flag set).
constexpr const char* kOrderKernel = R"(
__global__ void order(unsigned* tickets, unsigned* counter, unsigned* done, unsigned* overlaps) {
  if (threadIdx.x == 0) {
    unsigned ticket = atomicAdd(counter, 1u);
    tickets[blockIdx.x] = ticket;
    if (ticket > 0 && done[ticket - 1] == 0) atomicAdd(overlaps, 1u);
  }
  __syncthreads();
  if (threadIdx.x == 0) done[tickets[blockIdx.x]] = 1;
}
)";

TEST(BackendRegistry, TheSerialBackendRunsBlocksOneAfterAnotherInOrder) {
  opkit::test::register_cpu_serial_backend();
  opkit::Device serial = opkit::Device::parse("cpu-serial:0");
  constexpr unsigned blocks = 200;
  auto tickets = serial.alloc<unsigned>(blocks);
  auto counter = serial.alloc<unsigned>(1);
  auto done = serial.alloc<unsigned>(blocks);
  auto overlaps = serial.alloc<unsigned>(1);
  counter.fill(0);
  done.fill(0);
  overlaps.fill(0);
  opkit::Kernel k = serial.compile(opkit::Program(kOrderKernel).name("order.cu")).kernel("order");
  EXPECT_EQ(k.device(), serial);
  k.launch({.grid = blocks, .block = 64}, tickets, counter, done, overlaps);
  const auto got = tickets.to_host();
  for (unsigned b = 0; b < blocks; ++b) ASSERT_EQ(got[b], b) << "block " << b;
  EXPECT_EQ(overlaps.to_host()[0], 0u);
}

TEST(BackendRegistry, OperatorsRunOnTheSerialBackendThroughTheirKernelLanguage) {
  opkit::test::register_cpu_serial_backend();
  opkit::Device serial = opkit::Device::parse("cpu-serial");
  EXPECT_TRUE(opkit::ops::sha256_support().has("cpu-serial"));
  EXPECT_TRUE(opkit::ops::mine_support().has("cpu-serial"));
  std::vector<std::uint8_t> data(3 * 55);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 1);
  auto in = serial.alloc<std::uint8_t>(data.size());
  in.copy_from(data);
  auto out = serial.alloc<std::uint8_t>(3 * 32);
  opkit::ops::Sha256Kernel(serial).fixed(opkit::ops::HashAlgo::sha256, in, 55, out);
  const auto digests = out.to_host();
  for (std::size_t i = 0; i < 3; ++i) {
    const auto want = opkit::ops::sha256(std::span<const std::uint8_t>(data.data() + 55 * i, 55));
    EXPECT_TRUE(std::equal(want.begin(), want.end(), digests.begin() + static_cast<std::ptrdiff_t>(32 * i))) << i;
  }
}

struct Width {
  int value = 0;
  auto operator<=>(const Width&) const = default;
};

opkit::Program width_program(const Width& w) {
  return opkit::Program("__global__ void fill(int* a) { a[threadIdx.x] = WIDTH; }")
      .name("fill.cu")
      .define("WIDTH", w.value);
}

TEST(KernelSet, SkipsAndRefusesABackendWithoutAKernelNamingTheOperatorAndTheBackend) {
  opkit::KernelSet<Width> set("fill_only_on_cuda");
  set.add("cuda", {width_program});
  EXPECT_TRUE(set.has("cuda"));
  EXPECT_FALSE(set.has("cpu"));
  std::vector<std::string> skipped;
  const auto runnable = set.runnable({opkit::Device::cpu()}, &skipped);
  EXPECT_TRUE(runnable.empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_TRUE(has(skipped[0], "cpu:0") && has(skipped[0], "fill_only_on_cuda")) << skipped[0];
  const opkit::Error e = error_of([&] { set.kernel(opkit::Device::cpu(), {4}, "fill"); });
  EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
  EXPECT_TRUE(has(e.message(), "fill_only_on_cuda has no kernel for the cpu backend")) << e.message();
  EXPECT_TRUE(has(e.message(), "cuda")) << e.message();
}

TEST(KernelSet, ABackendEntryWinsOverItsLanguageAndKernelsAreReusedPerDeviceAndParameters) {
  opkit::KernelSet<Width> set("fill");
  set.add_language("cuda", {width_program, {.block = 256}});
  set.add("cpu", {width_program, {.block = 4}});
  opkit::Device cpu = opkit::Device::cpu();
  EXPECT_EQ(set.on(cpu).shape.block, 4u);
  opkit::test::register_cpu_serial_backend();
  EXPECT_EQ(set.on(opkit::Device::parse("cpu-serial")).shape.block, 256u);

  opkit::Kernel first = set.kernel(cpu, {7}, "fill");
  opkit::Kernel again = set.kernel(cpu, {7}, "fill");
  auto out = cpu.alloc<int>(4);
  again.launch({.grid = 1, .block = 4}, out);
  EXPECT_EQ(out.to_host(), (std::vector<int>{7, 7, 7, 7}));
  set.kernel(cpu, {9}, "fill").launch({.grid = 1, .block = 4}, out);
  EXPECT_EQ(out.to_host(), (std::vector<int>{9, 9, 9, 9}));
  EXPECT_EQ(first.name(), "fill");
}

TEST(Target, CompilesForTheCpuBackendWithoutADeviceAndBuildReportsTheCache) {
  const opkit::Program program = width_program({3});
  const opkit::CompiledProgram compiled = opkit::compile(program, opkit::Target::cpu());
  EXPECT_EQ(compiled.format, opkit::BinaryFormat::host_dso);
  EXPECT_EQ(opkit::cache_key(program, opkit::Target::cpu()), opkit::cache_key(program, opkit::Device::cpu().target()));
  opkit::KernelCache disabled = opkit::KernelCache::disabled();
  const opkit::BuildResult off = opkit::build(program, opkit::Target::cpu(), disabled);
  EXPECT_EQ(off.cache, opkit::CacheOutcome::off);
  EXPECT_EQ(off.key, opkit::cache_key(program, opkit::Target::cpu()));
  const opkit::Error unknown = error_of([&] { opkit::compile(program, {"tpu", ""}); });
  EXPECT_EQ(unknown.kind(), opkit::Errc::invalid_argument);
  EXPECT_TRUE(has(unknown.message(), "tpu")) << unknown.message();
  EXPECT_EQ(error_of([&] {
              opkit::compile(program, {"cpu", "riscv-not-this-host"});
            }).kind(),
            opkit::Errc::invalid_argument);
}

TEST(Target, ParsesCudaArchs) {
  EXPECT_EQ(opkit::parse_cuda_arch("sm_90")->sm, 90);
  EXPECT_FALSE(opkit::parse_cuda_arch("sm_90")->ptx);
  EXPECT_EQ(opkit::parse_cuda_arch("sm_90a")->sm, 90);
  EXPECT_TRUE(opkit::parse_cuda_arch("compute_80")->ptx);
  EXPECT_EQ(opkit::parse_cuda_arch("75")->sm, 75);
  for (const char* bad : {"", "sm_", "gfx90a", "sm_9000", "compute_x", "sm_0"})
    EXPECT_FALSE(opkit::parse_cuda_arch(bad).has_value()) << bad;
}

TEST(BinaryFormat, AnyBackendsFormatNameSurvivesTheCacheFormatAndDamageIsRefused) {
  opkit::CompiledProgram p;
  p.format = "spirv-1.6";
  p.target = "some-gpu";
  p.binary = {1, 2, 3};
  opkit::CompiledProgram q;
  ASSERT_TRUE(opkit::CompiledProgram::deserialize(p.serialize(), q));
  EXPECT_EQ(q.format, "spirv-1.6");
  EXPECT_EQ(opkit::binary_format_name("spirv-1.6"), "spirv-1.6");
  EXPECT_EQ(opkit::binary_format_name(opkit::BinaryFormat::ptx), "PTX");
  for (const char* bad : {"", "Has Spaces", "UPPER"}) {
    p.format = bad;
    EXPECT_FALSE(opkit::CompiledProgram::deserialize(p.serialize(), q)) << bad;
  }
}

}  // namespace
