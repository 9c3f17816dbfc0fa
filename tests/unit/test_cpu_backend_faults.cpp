// What goes wrong on the CPU backend is reported, not fatal: compile errors point at the user's
// file and line, warp primitives are refused at compile time, bad launches are rejected, and a
// kernel that traps, asserts, throws, touches unmapped memory or overflows its stack ends the
// launch with Error(Errc::launch) while the process (and the next launch) carries on. Under an
// ASan build, kernels compiled with OPKIT_CPU_SANITIZE=address report out-of-bounds writes.
#include <gtest/gtest.h>

#include <cstdlib>

#include "backend/cpu/kernel_source.hpp"
#include "opkit/opkit.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define OPKIT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPKIT_TEST_ASAN 1
#endif
#endif

namespace {

const char* kFaultKernels = R"cuda(
#include <assert.h>

__global__ void fill_ones(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
__global__ void trap_in_thread(int* out, int which) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == which) __trap();
  out[i] = 1;
}
__global__ void trap_after_barrier(int* out) {
  __shared__ int seen[64];
  seen[threadIdx.x] = 1;
  __syncthreads();
  if (threadIdx.x == 5) __trap();
  __syncthreads();
  out[threadIdx.x] = seen[63 - threadIdx.x];
}
__global__ void assert_positive(const int* values) { assert(values[threadIdx.x] > 0); }
__global__ void throw_in_thread(int which) {
  if ((int)threadIdx.x == which) throw 7;
}
__global__ void write_through(int* p) {
  if (threadIdx.x == 3) *p = 1;
}
// Each level reads its caller's frame, so no compiler can turn the recursion into a loop.
__device__ int deep(int n, volatile char* parent) {
  volatile char pad[4096];
  pad[0] = (char)n;
  pad[1] = parent[0];
  return n == 0 ? pad[1] : deep(n - 1, pad) + pad[0];
}
__global__ void recurse(int* out, int depth) {
  volatile char top[1] = {0};
  out[0] = deep(depth, top);
}
__global__ void takes_two(int* out, int value) { out[0] = value; }
)cuda";

opkit::Device cpu() {
  return opkit::Device::cpu();
}

const opkit::Module& faults() {
  static const opkit::Module module = cpu().compile(opkit::Program(kFaultKernels).name("cpu_faults.cu"));
  return module;
}

// The error a launch throws, or fails the test.
opkit::Error launch_error(const std::function<void()>& launch) {
  try {
    launch();
  } catch (const opkit::Error& e) {
    return e;
  }
  ADD_FAILURE() << "the launch did not throw";
  return opkit::Error(opkit::Errc::runtime, "test", "no error");
}

// After a fault, the runtime still works.
void expect_next_launch_works() {
  auto out = cpu().alloc<int>(64);
  out.fill(0);
  faults().kernel("fill_ones").launch({.grid = 2, .block = 32}, out);
  for (int v : out.to_host()) ASSERT_EQ(v, 1);
}

TEST(CpuBackendFaults, CompileErrorLogNamesTheUsersFileAndLine) {
  const char* source = "__global__ void broken(int* out) {\n  int x = 1;\n  out[0] = undeclared_name + x;\n}\n";
  try {
    cpu().build(opkit::Program(source).name("broken_kernel.cu"));
    FAIL() << "the compile did not fail";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::compile);
    EXPECT_EQ(e.source_name(), "broken_kernel.cu");
    EXPECT_NE(e.log().find("broken_kernel.cu:3:"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("undeclared_name"), std::string::npos) << e.log();
    EXPECT_NE(e.message().find("broken_kernel.cu:3:"), std::string::npos) << e.message();
    EXPECT_FALSE(e.options().empty());
    EXPECT_EQ(e.log().find("/tmp/opkit-cpu-"), std::string::npos) << "temporary paths leak into the log";
  }
}

TEST(CpuBackendFaults, ErrorsInInMemoryHeadersNameTheHeader) {
  try {
    cpu().build(opkit::Program("#include \"helpers.cuh\"\n__global__ void k(int* o) { o[0] = helper(); }\n")
                    .name("uses_header.cu")
                    .header("helpers.cuh", "__device__ int helper() {\n  return missing;\n}\n"));
    FAIL() << "the compile did not fail";
  } catch (const opkit::Error& e) {
    EXPECT_NE(e.log().find("helpers.cuh:2:"), std::string::npos) << e.log();
  }
}

TEST(CpuBackendFaults, WarpPrimitivesFailAtCompileTimeWithAClearMessage) {
  const char* source = "__global__ void shuffle(int* v) { v[threadIdx.x] = __shfl_sync(0xffffffffu, v[0], 3); }\n";
  try {
    cpu().build(opkit::Program(source).name("warp.cu"));
    FAIL() << "a warp primitive compiled";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::compile);
    EXPECT_NE(e.log().find("__shfl_sync is a warp-level primitive"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("warp.cu:1"), std::string::npos) << e.log();
  }
}

TEST(CpuBackendFaults, ArgumentCountAndSizeMismatchesAreRejected) {
  auto out = cpu().alloc<int>(1);
  opkit::Kernel k = faults().kernel("takes_two");
  opkit::Error count = launch_error([&] { k.launch({.grid = 1, .block = 1}, out); });
  EXPECT_EQ(count.kind(), opkit::Errc::invalid_argument);
  EXPECT_NE(count.message().find("takes 2 argument(s), 1 given"), std::string::npos) << count.what();
  opkit::Error size = launch_error([&] { k.launch({.grid = 1, .block = 1}, out, 1.0); });
  EXPECT_EQ(size.kind(), opkit::Errc::invalid_argument);
  EXPECT_NE(size.message().find("argument 1 is 8 bytes"), std::string::npos) << size.what();
  k.launch({.grid = 1, .block = 1}, out, 5);
  EXPECT_EQ(out.to_host()[0], 5);
}

TEST(CpuBackendFaults, LaunchesBeyondCudaLimitsFailAsGpuLaunchesDo) {
  auto out = cpu().alloc<int>(1);
  opkit::Kernel k = faults().kernel("takes_two");
  // A launch error with CUDA's code, as cuLaunchKernel reports it (the CLI's exit status 3).
  const auto expect_launch_error = [](const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::launch) << e.what();
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_VALUE");
  };
  expect_launch_error(launch_error([&] { k.launch({.grid = 1, .block = 2048}, out, 1); }));
  expect_launch_error(launch_error([&] { k.launch({.grid = {1, 70000}, .block = 1}, out, 1); }));
  expect_launch_error(launch_error([&] { k.launch({.grid = 1, .block = 1, .shared_bytes = 1u << 20}, out, 1); }));
}

TEST(CpuBackendFaults, StaticSharedMemoryOverAGpusLimitIsACompileErrorAsPtxasMakesIt) {
  // 400 KB of static shared memory used to compile and run; no GPU allows over 48 KiB.
  try {
    cpu().compile(opkit::Program("__global__ void big(int* o) { __shared__ char s[400000]; s[threadIdx.x] = 1; "
                                 "o[0] = s[0]; }")
                      .name("big_shared.cu"));
    FAIL() << "400000 bytes of static shared memory compiled";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::compile) << e.what();
    EXPECT_EQ(e.kernel(), "big");
    EXPECT_NE(e.message().find("uses too much shared data (400000 bytes, 49152 max)"), std::string::npos) << e.what();
  }
  // Exactly the limit is fine, counted per kernel (another kernel's array is not this one's), and
  // static plus dynamic shared memory must fit a block's 227 KiB at launch, as on a GPU.
  const opkit::Module module = cpu().compile(opkit::Program(R"cuda(
    namespace ns { __global__ void at_limit(int* o) { __shared__ int s[12288]; s[threadIdx.x] = 4; o[0] = s[0]; } }
    __global__ void beside(int* o) { __shared__ int t[12288]; t[threadIdx.x] = 5; o[0] = t[0]; }
  )cuda")
                                                 .name("limit_shared.cu"));
  opkit::Kernel at_limit = module.kernel("ns::at_limit");
  EXPECT_EQ(at_limit.attributes().static_shared_bytes, 49152);
  auto out = cpu().alloc<int>(1);
  at_limit.launch({.grid = 1, .block = 1}, out);
  EXPECT_EQ(out.to_host()[0], 4);
  at_limit.carve_shared_memory_for(4);  // a GPU's L1 / shared-memory hint: nothing to do here
  at_limit.launch({.grid = 1, .block = 1}, out);
  EXPECT_EQ(out.to_host()[0], 4);
  opkit::Error e = launch_error([&] { at_limit.launch({.grid = 1, .block = 1, .shared_bytes = 200 * 1024}, out); });
  EXPECT_EQ(e.kind(), opkit::Errc::launch) << e.what();
  EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_VALUE");
}

TEST(CpuBackendFaults, TrapEndsTheLaunchAndNamesTheThread) {
  auto out = cpu().alloc<int>(256);
  opkit::Error e = launch_error([&] { faults().kernel("trap_in_thread").launch({.grid = 4, .block = 64}, out, 133); });
  EXPECT_EQ(e.kind(), opkit::Errc::launch);
  EXPECT_EQ(e.kernel(), "trap_in_thread");
  EXPECT_NE(e.message().find("block (2,0,0) thread (5,0,0): __trap() called"), std::string::npos) << e.what();
  expect_next_launch_works();
}

TEST(CpuBackendFaults, TrapWhileOtherThreadsWaitAtABarrier) {
  auto out = cpu().alloc<int>(64);
  opkit::Error e = launch_error([&] { faults().kernel("trap_after_barrier").launch({.grid = 3, .block = 64}, out); });
  EXPECT_NE(e.message().find("thread (5,0,0): __trap() called"), std::string::npos) << e.what();
  expect_next_launch_works();
}

TEST(CpuBackendFaults, FailedAssertEndsTheLaunch) {
  std::vector<int> values(32, 1);
  values[17] = 0;
  auto in = cpu().alloc<int>(values.size());
  in.copy_from(values);
  opkit::Error e = launch_error([&] { faults().kernel("assert_positive").launch({.grid = 1, .block = 32}, in); });
  EXPECT_EQ(e.kind(), opkit::Errc::launch);
  EXPECT_NE(e.message().find("thread (17,0,0)"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("values[threadIdx.x] > 0"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("cpu_faults.cu"), std::string::npos) << e.what();
  expect_next_launch_works();
}

TEST(CpuBackendFaults, EscapedExceptionEndsTheLaunch) {
  opkit::Error e = launch_error([&] { faults().kernel("throw_in_thread").launch({.grid = 1, .block = 16}, 9); });
  EXPECT_NE(e.message().find("thread (9,0,0): kernel threw a C++ exception"), std::string::npos) << e.what();
  expect_next_launch_works();
}

TEST(CpuBackendFaults, InvalidMemoryAccessEndsTheLaunch) {
#ifdef OPKIT_TEST_ASAN
  GTEST_SKIP() << "under AddressSanitizer, ASan handles SIGSEGV itself (opkit installs no handler)";
#endif
  opkit::Error e = launch_error(
      [&] { faults().kernel("write_through").launch({.grid = 1, .block = 8}, static_cast<int*>(nullptr)); });
  EXPECT_EQ(e.kind(), opkit::Errc::launch);
  EXPECT_NE(e.message().find("thread (3,0,0): invalid memory access (SIGSEGV) at address"), std::string::npos)
      << e.what();
  expect_next_launch_works();
}

TEST(CpuBackendFaults, StackOverflowIsReportedAsSuch) {
#ifdef OPKIT_TEST_ASAN
  GTEST_SKIP() << "under AddressSanitizer, ASan handles SIGSEGV itself (opkit installs no handler)";
#endif
  auto out = cpu().alloc<int>(1);
  opkit::Error e = launch_error([&] { faults().kernel("recurse").launch({.grid = 1, .block = 2}, out, 1000); });
  EXPECT_NE(e.message().find("stack overflow"), std::string::npos) << e.what();
  faults().kernel("recurse").launch({.grid = 1, .block = 2}, out, 3);
  EXPECT_EQ(out.to_host()[0], 7);  // 1 + 1 + 2 + 3
  expect_next_launch_works();
}

TEST(CpuBackendFaults, OutOfBoundsWriteIsReportedUnderAsan) {
#ifndef OPKIT_TEST_ASAN
  GTEST_SKIP() << "needs a test binary built with AddressSanitizer (OPKIT_SANITIZE=address): kernels compiled "
                  "with OPKIT_CPU_SANITIZE=address need the ASan runtime in the process";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        setenv("OPKIT_CPU_SANITIZE", "address", 1);
        auto module =
            cpu().compile(opkit::Program("__global__ void write_past_end(int* out, int n) { out[threadIdx.x] = n; }\n")
                              .name("oob.cu"));
        auto buffer = cpu().alloc<int>(16);
        module.kernel("write_past_end").launch({.grid = 1, .block = 17}, buffer, 16);
      },
      "heap-buffer-overflow");
#endif
}

TEST(CpuBackendRewrite, SharedQualifiersBecomeThreadLocals) {
  const std::string text =
      "# 1 \"k.cu\"\n__global__ void k() {\n  __shared__ float a[4];\n  static __shared__ int b;\n"
      "  extern __shared__ __attribute__((aligned(16))) unsigned char raw[];\n  const char* s = \"__shared__\";\n"
      "  int big = 1'000'000;\n}\n";
  opkit::cpu::RewrittenSource r = opkit::cpu::rewrite_preprocessed(text, "k.cu");
  EXPECT_NE(r.text.find("static thread_local float a[4];"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("static thread_local int b;"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("__attribute__((aligned(16))) unsigned char static thread_local* const raw = "
                        "::opkit_cpu::dynamic_shared();"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("\"__shared__\""), std::string::npos) << "string literals are left alone";
  EXPECT_NE(r.text.find("1'000'000"), std::string::npos);
  EXPECT_EQ(r.text.find("__global__"), std::string::npos);
  EXPECT_NE(r.user_code.find("__global__ void k()"), std::string::npos) << r.user_code;
  EXPECT_EQ(std::count(r.text.begin(), r.text.end(), '\n'), std::count(text.begin(), text.end(), '\n'));
}

TEST(CpuBackendRewrite, UnsupportedExternSharedFormNamesFileAndLine) {
  const std::string text = "# 7 \"user.cu\"\nvoid f() {\n  extern __shared__ float a[], b[];\n}\n";
  try {
    opkit::cpu::rewrite_preprocessed(text, "user.cu");
    FAIL() << "accepted a declaration the rewrite cannot handle";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::compile);
    EXPECT_NE(e.message().find("user.cu:8: unsupported extern __shared__ declaration"), std::string::npos)
        << e.message();
  }
}

TEST(CpuBackendRewrite, KernelsAreRecordedWithTheirNamespaces) {
  const std::string text =
      "namespace a { namespace b { __global__ void __attribute__((noinline)) k1(int*); } }\n"
      "using namespace a;\nnamespace c::d { __global__ void k2() {} }\n"
      "extern \"C\" { __global__ void k3() {} }\nstruct S { void f() {} };\n__global__ void k4() {}\n";
  opkit::cpu::RewrittenSource r = opkit::cpu::rewrite_preprocessed(text, "ns.cu");
  const std::multimap<std::string, std::string> expected = {{"k1", "a::b"}, {"k2", "c::d"}, {"k3", ""}, {"k4", ""}};
  EXPECT_EQ(r.kernel_namespaces, expected);
}

TEST(CpuBackendRewrite, SystemHeaderLinesStayOutOfTheUserView) {
  const std::string text =
      "# 1 \"/usr/include/x.h\" 1 3\n__global__ void from_system();\n# 2 \"mine.cu\" 2\n__global__ void mine();\n";
  opkit::cpu::RewrittenSource r = opkit::cpu::rewrite_preprocessed(text, "mine.cu");
  EXPECT_EQ(r.user_code.find("from_system"), std::string::npos) << r.user_code;
  EXPECT_NE(r.user_code.find("mine()"), std::string::npos) << r.user_code;
}

}  // namespace
