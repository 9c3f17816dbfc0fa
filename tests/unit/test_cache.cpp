// The on-disk kernel cache: keys, hits, damaged and untrusted entries, private directories, and
// concurrent writers. Process-wide settings (OPKIT_CACHE=0, OPKIT_CACHE_DIR) are read once per
// process, so tests/cli/test_compile.sh covers them through the CLI.
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nvrtc_required.hpp"
#include "opkit/cache.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/program.hpp"
#include "opkit/sha256_hasher.hpp"
#include "opkit/target.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* kKernel = "__global__ void scale(float* a, float s) { a[threadIdx.x] *= s; }\n";

// A fresh directory under $TMPDIR, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "opkit-cache-test.XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

// A program with random contents, so that a stale entry from another run can never match.
opkit::CompiledProgram random_program(std::size_t bytes) {
  std::mt19937_64 rng(std::random_device{}());
  opkit::CompiledProgram p;
  p.format = opkit::BinaryFormat::cubin;
  p.target = "sm_90";
  p.source_name = "random.cu";
  p.binary.resize(bytes);
  for (auto& b : p.binary) b = static_cast<std::uint8_t>(rng());
  p.lowered_names["k"] = "_Z1kv";
  return p;
}

void expect_same(const opkit::CompiledProgram& a, const opkit::CompiledProgram& b) {
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.source_name, b.source_name);
  EXPECT_EQ(a.binary, b.binary);
  EXPECT_EQ(a.log, b.log);
  EXPECT_EQ(a.lowered_names, b.lowered_names);
}

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::size_t count_files(const fs::path& dir, const std::string& needle) {
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    n += entry.path().filename().string().find(needle) != std::string::npos;
  return n;
}

std::optional<uid_t> nobody_uid() {
  const passwd* pw = ::getpwnam("nobody");  // NOLINT(concurrency-mt-unsafe): tests run on one thread
  if (pw == nullptr) return std::nullopt;
  return pw->pw_uid;
}

TEST(CacheKey, SameSpecAndTargetGiveTheSameKey) {
  auto a = opkit::Program(kKernel).define("N", 4).option("-lineinfo");
  auto b = opkit::Program(kKernel).define("N", 4).option("-lineinfo");
  EXPECT_EQ(opkit::KernelCache::key(a.spec(), "nvrtc-13.0-sm_90"),
            opkit::KernelCache::key(b.spec(), "nvrtc-13.0-sm_90"));
  EXPECT_EQ(opkit::KernelCache::key(a.spec(), "x").size(), 64u);
}

TEST(CacheKey, EverythingThatChangesTheBinaryChangesTheKey) {
  const std::string base = opkit::KernelCache::key(opkit::Program(kKernel).spec(), "nvrtc-13.0-sm_90");
  const std::vector<std::pair<const char*, std::string>> variants = {
      {"source", opkit::KernelCache::key(opkit::Program(std::string(kKernel) + " ").spec(), "nvrtc-13.0-sm_90")},
      {"name", opkit::KernelCache::key(opkit::Program(kKernel).name("other.cu").spec(), "nvrtc-13.0-sm_90")},
      {"define", opkit::KernelCache::key(opkit::Program(kKernel).define("N").spec(), "nvrtc-13.0-sm_90")},
      {"option", opkit::KernelCache::key(opkit::Program(kKernel).option("-G").spec(), "nvrtc-13.0-sm_90")},
      {"header", opkit::KernelCache::key(opkit::Program(kKernel).header("h.cuh", "").spec(), "nvrtc-13.0-sm_90")},
      {"name expression",
       opkit::KernelCache::key(opkit::Program(kKernel).name_expression("scale").spec(), "nvrtc-13.0-sm_90")},
      {"arch", opkit::KernelCache::key(opkit::Program(kKernel).spec(), "nvrtc-13.0-sm_80")},
      {"compiler version", opkit::KernelCache::key(opkit::Program(kKernel).spec(), "nvrtc-12.8-sm_90")},
  };
  for (const auto& [what, key] : variants) EXPECT_NE(key, base) << what << " does not change the key";
}

TEST(CacheKey, DefinesAreNotConfusedByConcatenation) {
  // -DAB=C and -DA=BC, or one define vs two, must not collide.
  auto k1 = opkit::KernelCache::key(opkit::Program(kKernel).define("AB", "C").spec(), "t");
  auto k2 = opkit::KernelCache::key(opkit::Program(kKernel).define("A", "BC").spec(), "t");
  auto k3 = opkit::KernelCache::key(opkit::Program(kKernel).define("A").define("B").spec(), "t");
  auto k4 = opkit::KernelCache::key(opkit::Program(kKernel).define("A B").spec(), "t");
  EXPECT_NE(k1, k2);
  EXPECT_NE(k3, k4);
}

TEST(CacheKey, EditingAHeaderFoundThroughAnIncludeDirChangesTheKey) {
  TempDir dir;
  fs::create_directories(dir.path() / "inc" / "nested");
  write_bytes(dir.path() / "inc" / "outer.cuh",
              {'#', 'i', 'n', 'c', 'l', 'u', 'd', 'e', ' ', '"', 'n', 'e', 's', 't',
               'e', 'd', '/', 'i', 'n', 'n', 'e', 'r', '.', 'c', 'u', 'h', '"', '\n'});
  auto write_inner = [&](const std::string& text) {
    write_bytes(dir.path() / "inc" / "nested" / "inner.cuh", std::vector<std::uint8_t>(text.begin(), text.end()));
  };
  write_inner("#define VALUE 1\n");
  // The include is not on the first line, and is reached through another header.
  auto program = opkit::Program("// kernel\n#include \"outer.cuh\"\n__global__ void k(int* a) { a[0] = VALUE; }\n")
                     .include_dir((dir.path() / "inc").string());
  const std::string before = opkit::KernelCache::key(program.spec(), "t");
  EXPECT_EQ(opkit::KernelCache::key(program.spec(), "t"), before);
  write_inner("#define VALUE 2\n");
  EXPECT_NE(opkit::KernelCache::key(program.spec(), "t"), before) << "a header edit must recompile";
}

TEST(CacheDirectory, IsCreatedPrivate) {
  TempDir dir;
  opkit::KernelCache cache(dir.path() / "a" / "b");
  EXPECT_TRUE(cache.enabled()) << cache.last_error();
  EXPECT_EQ(mode_of(dir.path() / "a" / "b"), 0700u);
}

TEST(CacheDirectory, AnExistingPrivateEnoughDirectoryKeepsItsMode) {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  opkit::KernelCache cache(dir.path());
  EXPECT_TRUE(cache.enabled()) << cache.last_error();
  EXPECT_EQ(mode_of(dir.path()), 0755u);
}

TEST(CacheDirectory, WritableByOthersIsRefused) {
  for (mode_t mode : {0777u, 0770u, 01777u}) {
    TempDir dir;
    ::chmod(dir.path().c_str(), mode);
    opkit::KernelCache cache(dir.path());
    EXPECT_FALSE(cache.enabled()) << std::oct << mode;
    EXPECT_NE(cache.last_error().find("writable by others"), std::string::npos) << cache.last_error();
    EXPECT_FALSE(cache.store("0123", random_program(64)));
  }
}

TEST(CacheDirectory, OwnedByAnotherUserIsRefused) {
  auto nobody = nobody_uid();
  if (geteuid() != 0 || !nobody) GTEST_SKIP() << "needs root (to chown a directory to nobody)";
  TempDir dir;
  fs::create_directory(dir.path() / "theirs");
  ASSERT_EQ(::chown((dir.path() / "theirs").c_str(), *nobody, static_cast<gid_t>(-1)), 0);
  opkit::KernelCache cache(dir.path() / "theirs");
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.last_error().find("another user"), std::string::npos) << cache.last_error();
}

TEST(CacheDirectory, UncreatableDirectoryDisablesTheCacheWithAReason) {
  TempDir dir;
  write_bytes(dir.path() / "file", {1});
  opkit::KernelCache cache(dir.path() / "file" / "cache");
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.last_error().find("cannot create"), std::string::npos) << cache.last_error();
  EXPECT_FALSE(cache.load("0123").has_value());
}

TEST(CacheDirectory, DisabledCacheNeitherHitsNorStores) {
  auto cache = opkit::KernelCache::disabled();
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(cache.store("0123", random_program(64)));
  EXPECT_FALSE(cache.load("0123").has_value());
}

TEST(CacheEntry, HitAfterMissReturnsTheCompiledProgram) {
  OPKIT_REQUIRE_NVRTC();
  TempDir dir;
  opkit::KernelCache cache(dir.path());
  auto program = opkit::Program(kKernel).name("scale.cu");
  auto compiled = opkit::compile(program, opkit::Target::cuda("sm_90"));
  const std::string key = opkit::KernelCache::key(program.spec(), "nvrtc-sm_90");
  EXPECT_FALSE(cache.load(key).has_value()) << "an empty cache hit";
  ASSERT_TRUE(cache.store(key, compiled)) << cache.last_error();
  EXPECT_TRUE(fs::exists(cache.entry_path(key)));
  EXPECT_EQ(mode_of(cache.entry_path(key)), 0600u);
  auto hit = cache.load(key);
  ASSERT_TRUE(hit.has_value());
  expect_same(*hit, compiled);
  EXPECT_EQ(hit->lowered_names.at("scale"), "_Z5scalePff");
  // Another cache object on the same directory (another process, in effect) sees it too.
  auto again = opkit::KernelCache(dir.path()).load(key);
  ASSERT_TRUE(again.has_value());
  expect_same(*again, compiled);
  EXPECT_EQ(count_files(dir.path(), ".tmp"), 0u) << "temporary files left behind";
}

TEST(CacheEntry, TruncatedEntryIsAMissAndIsReplaced) {
  OPKIT_REQUIRE_NVRTC();
  TempDir dir;
  opkit::KernelCache cache(dir.path());
  auto program = opkit::Program(kKernel);
  auto compiled = opkit::compile(program, opkit::Target::cuda("sm_90"));
  const std::string key = opkit::KernelCache::key(program.spec(), "t");
  ASSERT_TRUE(cache.store(key, compiled));
  auto bytes = read_bytes(cache.entry_path(key));
  for (std::size_t keep : {bytes.size() - 1, bytes.size() / 2, std::size_t{31}, std::size_t{0}}) {
    write_bytes(cache.entry_path(key), std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + keep));
    EXPECT_FALSE(cache.load(key).has_value()) << "truncated to " << keep << " bytes";
  }
  ASSERT_TRUE(cache.store(key, compiled));  // what Device::build does after the miss
  auto hit = cache.load(key);
  ASSERT_TRUE(hit.has_value());
  expect_same(*hit, compiled);
}

TEST(CacheEntry, CorruptedEntryIsAMissAndIsReplaced) {
  OPKIT_REQUIRE_NVRTC();
  TempDir dir;
  opkit::KernelCache cache(dir.path());
  auto program = opkit::Program(kKernel);
  auto compiled = opkit::compile(program, opkit::Target::cuda("sm_90"));
  const std::string key = opkit::KernelCache::key(program.spec(), "t");
  ASSERT_TRUE(cache.store(key, compiled));
  const auto good = read_bytes(cache.entry_path(key));
  std::mt19937 rng(std::random_device{}());
  for (std::size_t where : {std::size_t{0}, good.size() / 2, good.size() - 1,
                            std::uniform_int_distribution<std::size_t>(0, good.size() - 1)(rng)}) {
    auto bad = good;
    bad[where] ^= 0x40;
    write_bytes(cache.entry_path(key), bad);
    EXPECT_FALSE(cache.load(key).has_value()) << "byte " << where << " flipped";
  }
  ASSERT_TRUE(cache.store(key, compiled));
  auto hit = cache.load(key);
  ASSERT_TRUE(hit.has_value());
  expect_same(*hit, compiled);
}

TEST(CacheEntry, WritableByOthersIsIgnored) {
  TempDir dir;
  opkit::KernelCache cache(dir.path());
  auto program = random_program(1000);
  ASSERT_TRUE(cache.store("feed", program));
  ASSERT_TRUE(cache.load("feed").has_value());
  for (mode_t mode : {0666u, 0620u, 0602u}) {
    ::chmod(cache.entry_path("feed").c_str(), mode);
    EXPECT_FALSE(cache.load("feed").has_value()) << "mode " << std::oct << mode;
  }
  ::chmod(cache.entry_path("feed").c_str(), 0600);
  EXPECT_TRUE(cache.load("feed").has_value());
}

TEST(CacheEntry, OwnedByAnotherUserIsIgnored) {
  auto nobody = nobody_uid();
  if (geteuid() != 0 || !nobody) GTEST_SKIP() << "needs root (to chown an entry to nobody)";
  TempDir dir;
  opkit::KernelCache cache(dir.path());
  ASSERT_TRUE(cache.store("feed", random_program(1000)));
  ASSERT_EQ(::chown(cache.entry_path("feed").c_str(), *nobody, static_cast<gid_t>(-1)), 0);
  EXPECT_FALSE(cache.load("feed").has_value()) << "an entry someone else owns was trusted";
  // Storing again replaces it with one of ours (rename over it), which is trusted.
  ASSERT_TRUE(cache.store("feed", random_program(1000)));
  EXPECT_TRUE(cache.load("feed").has_value());
}

TEST(CacheEntry, SymlinkIsIgnored) {
  TempDir dir;
  opkit::KernelCache cache(dir.path());
  ASSERT_TRUE(cache.store("real", random_program(100)));
  fs::create_symlink(cache.entry_path("real"), cache.entry_path("link"));
  EXPECT_FALSE(cache.load("link").has_value());
}

TEST(CacheEntry, IntactChecksumOverADamagedProgramIsAMiss) {
  TempDir dir;
  opkit::KernelCache cache(dir.path());
  ASSERT_TRUE(cache.store("feed", random_program(100)));
  // Break the serialized program (the target string's length now runs past the end) and write a
  // checksum that matches the damage: the entry passes the integrity check, deserialize must not.
  auto bytes = read_bytes(cache.entry_path("feed"));
  std::vector<std::uint8_t> payload(bytes.begin(), bytes.end() - 32);
  payload[8 + 8 + 7] = 0x7f;
  const opkit::Sha256Digest digest = opkit::Sha256Hasher().digest(payload);
  payload.insert(payload.end(), digest.begin(), digest.end());
  write_bytes(cache.entry_path("feed"), payload);
  EXPECT_FALSE(cache.load("feed").has_value());
}

TEST(CacheEntry, StoreFailureIsReportedNotThrown) {
  TempDir dir;
  opkit::KernelCache cache(dir.path() / "gone");
  ASSERT_TRUE(cache.enabled());
  fs::remove(dir.path() / "gone");
  const opkit::KernelCache::StoreResult stored = cache.store("feed", random_program(10));
  EXPECT_FALSE(stored);
  EXPECT_NE(stored.error.find("cannot create a file"), std::string::npos) << stored.error;
  EXPECT_EQ(cache.last_error(), "") << "a failed store must not change the cache's own state";
}

TEST(CacheEntry, ADisabledCacheSaysWhyInTheStoreResult) {
  const opkit::KernelCache cache = opkit::KernelCache::disabled();
  EXPECT_FALSE(cache.store("feed", random_program(10)));
}

// One KernelCache is shared by every thread of a process (KernelCache::global(), background
// compiles): failing stores on many threads at once must each report their own error, and leave
// the cache untouched (the old design wrote a shared `mutable` error string: a data race).
TEST(CacheEntry, ThreadsStoringIntoOneCacheEachGetTheirOwnResult) {
  TempDir dir;
  const opkit::KernelCache cache(dir.path() / "gone");
  ASSERT_TRUE(cache.enabled());
  fs::remove(dir.path() / "gone");
  const auto program = random_program(64);
  constexpr int kThreads = 4, kStores = 300;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kStores; ++i) {
        const auto stored = cache.store("k" + std::to_string(t) + "_" + std::to_string(i), program);
        if (stored || stored.error.find("cannot create a file in " + (dir.path() / "gone").string()) != 0) ++wrong;
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache.last_error(), "");
}

TEST(CacheEntry, TwoProcessesStoringTheSameKeyLeaveOneValidEntry) {
  TempDir dir;
  const auto program = random_program(200000);  // large enough that writes interleave
  constexpr int kRounds = 40;
  std::vector<pid_t> children;
  for (int child = 0; child < 2; ++child) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Each round: store, then load; a load must never see a half-written entry.
      opkit::KernelCache cache(dir.path());
      int failures = 0;
      for (int i = 0; i < kRounds; ++i) {
        failures += !cache.store("shared", program);
        auto hit = cache.load("shared");
        failures += !hit || hit->binary != program.binary;
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed or saw a partial entry";
  }
  EXPECT_EQ(count_files(dir.path(), ".bin"), 1u);
  EXPECT_EQ(count_files(dir.path(), ".tmp"), 0u);
  auto hit = opkit::KernelCache(dir.path()).load("shared");
  ASSERT_TRUE(hit.has_value());
  expect_same(*hit, program);
}

}  // namespace
