// The bounded in-process module cache: a process that compiles a program per
// job keeps a bounded number of modules loaded, while modules still in use stay loaded.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/module_cache.hpp"
#include "fake_backend.hpp"
#include "opkit/cache.hpp"
#include "opkit/module.hpp"

namespace {

using opkit::detail::ModuleCache;
using opkit_test::FakeDevice;
using opkit_test::FakeModule;

// Resident set size in bytes (Linux).
std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// A job's program: the same kernel specialised on a job constant, as the miner makes them.
opkit::Program job_program(int job) {
  return opkit::Program("__global__ void fake_kernel(unsigned* out) { *out = JOB; }").name("job.cu").define("JOB", job);
}

std::string key_of(const opkit::Program& program, FakeDevice& device) {
  return opkit::KernelCache::key(program.spec(), device.compiler_identity());
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMeasureRss = false;  // ASan's quarantine keeps freed memory resident
#else
constexpr bool kMeasureRss = true;
#endif

TEST(ModuleCache, TenThousandDistinctJobsKeepAtMostCapacityModulesLoaded) {
  auto device = std::make_shared<FakeDevice>(16384);
  ModuleCache cache(64);
  const long alive_before = FakeModule::alive;
  const std::size_t rss_before = resident_bytes();
  long most_alive = 0;
  for (int job = 0; job < 10000; ++job) {
    const opkit::Program program = job_program(job);
    ModuleCache::Entry entry =
        cache.get_or_load(device, key_of(program, *device), [&] { return device->compile(program.spec()); });
    ASSERT_NE(entry.module->function("fake_kernel"), nullptr);
    most_alive = std::max(most_alive, FakeModule::alive - alive_before);
  }
  EXPECT_EQ(device->compiles, 10000);
  EXPECT_EQ(cache.size(), 64u);
  // 64 cached plus the one the loop held while inserting.
  EXPECT_LE(most_alive, 65);
  // Unbounded, 10,000 modules of 2 x 16 KiB (the program and its module's copy) would hold
  // about 320 MiB; bounded, a few MiB.
  if (kMeasureRss) {
    const std::size_t rss_after = resident_bytes();
    EXPECT_LT(rss_after - std::min(rss_before, rss_after), std::size_t{64} << 20);
  }
}

TEST(ModuleCache, AnEvictedModuleStaysLoadedWhileHeld) {
  auto device = std::make_shared<FakeDevice>();
  ModuleCache cache(4);
  const opkit::Program first = job_program(-1);
  ModuleCache::Entry held =
      cache.get_or_load(device, key_of(first, *device), [&] { return device->compile(first.spec()); });
  std::weak_ptr<opkit::backend::Module> watch = held.module;
  for (int job = 0; job < 100; ++job) {
    const opkit::Program program = job_program(job);
    cache.get_or_load(device, key_of(program, *device), [&] { return device->compile(program.spec()); });
  }
  EXPECT_FALSE(watch.expired()) << "evicted from the cache but still held: must stay loaded";
  EXPECT_NE(held.module->function("fake_kernel"), nullptr);
  EXPECT_EQ(static_cast<FakeModule&>(*held.module).image(), held.program->binary);
  held = {};
  EXPECT_TRUE(watch.expired()) << "neither cached nor held: must be unloaded";
  // Asked again, the evicted program is built again.
  const long compiles = device->compiles;
  cache.get_or_load(device, key_of(first, *device), [&] { return device->compile(first.spec()); });
  EXPECT_EQ(device->compiles, compiles + 1);
}

TEST(ModuleCache, ARepeatedKeyIsBuiltOnceAndRecentUseProtectsIt) {
  auto device = std::make_shared<FakeDevice>();
  ModuleCache cache(2);
  auto get = [&](int job) {
    const opkit::Program program = job_program(job);
    return cache.get_or_load(device, key_of(program, *device), [&] { return device->compile(program.spec()); });
  };
  const auto a = get(1).module;
  get(2);
  EXPECT_EQ(get(1).module, a);  // a hit, and 1 is now the most recently used
  get(3);                       // evicts 2, the least recently used
  EXPECT_EQ(get(1).module, a);
  EXPECT_EQ(device->compiles, 3);
  get(2);
  EXPECT_EQ(device->compiles, 4);
}

TEST(ModuleCache, CapacityZeroKeepsNothing) {
  auto device = std::make_shared<FakeDevice>();
  ModuleCache cache(0);
  const opkit::Program program = job_program(7);
  const std::string key = key_of(program, *device);
  std::weak_ptr<opkit::backend::Module> watch =
      cache.get_or_load(device, key, [&] { return device->compile(program.spec()); }).module;
  EXPECT_TRUE(watch.expired());
  cache.get_or_load(device, key, [&] { return device->compile(program.spec()); });
  EXPECT_EQ(device->compiles, 2);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ModuleCache, AFailedBuildCachesNothing) {
  auto device = std::make_shared<FakeDevice>();
  ModuleCache cache(4);
  EXPECT_THROW(cache.get_or_load(device, "k",
                                 []() -> opkit::CompiledProgram {
                                   throw opkit::Error(opkit::Errc::compile, "fake", "does not compile");
                                 }),
               opkit::Error);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ModuleCache, TheSameKeyOnTwoDevicesIsTwoModules) {
  auto one = std::make_shared<FakeDevice>();
  auto two = std::make_shared<FakeDevice>();
  ModuleCache cache(8);
  const opkit::Program program = job_program(1);
  const std::string key = key_of(program, *one);
  auto a = cache.get_or_load(one, key, [&] { return one->compile(program.spec()); }).module;
  auto b = cache.get_or_load(two, key, [&] { return two->compile(program.spec()); }).module;
  EXPECT_NE(a, b);
}

// Many threads over a few keys: every answer is the module of its own key, and the bound holds.
TEST(ModuleCache, ThreadsSharingTheCacheGetTheirOwnKeysModule) {
  auto device = std::make_shared<FakeDevice>(64);
  ModuleCache cache(8);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const int job = (i * 7 + t) % 20;
        const opkit::Program program = job_program(job);
        const auto entry =
            cache.get_or_load(device, key_of(program, *device), [&] { return device->compile(program.spec()); });
        const auto& image = static_cast<FakeModule&>(*entry.module).image();
        const std::string expected = "JOB=" + std::to_string(job) + ";";
        if (std::string(image.begin(), image.begin() + static_cast<long>(expected.size())) != expected ||
            entry.program->binary != image)
          ++wrong;
        if (cache.size() > 8) ++wrong;
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
