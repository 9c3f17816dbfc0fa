// Kernel-name discovery and the CompiledProgram byte format.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "nvrtc_required.hpp"
#include "opkit/error.hpp"
#include "opkit/program.hpp"
#include "opkit/target.hpp"

namespace {

TEST(FindKernelNames, FindsPlainExternCAndLaunchBoundsKernels) {
  const char* source = R"(
    __global__ void plain(float* a) {}
    extern "C" __global__ void c_linkage(int n) {}
    __global__ void __launch_bounds__(256, 2) bounded(int* x) {}
    static __global__ void
        multi_line (int x) {}
    __device__ int helper(int x) { return x; }
  )";
  EXPECT_EQ(opkit::find_kernel_names(source),
            (std::vector<std::string>{"plain", "c_linkage", "bounded", "multi_line"}));
}

TEST(FindKernelNames, SkipsCommentsStringsAndTemplates) {
  const char* source = R"src(
    // __global__ void commented(int* a) {}
    /* __global__ void block_commented(int* a) {} */
    const char* s = "__global__ void in_string(int)";
    template <typename T> __global__ void templated(T* a) {}
    __global__ void real(int* a) {}
  )src";
  EXPECT_EQ(opkit::find_kernel_names(source), (std::vector<std::string>{"real"}));
}

TEST(FindKernelNames, KernelsAfterStructsAttributesAndMultiLineTemplates) {
  const char* source = R"src(
    struct Pair { int a, b; };
    __global__ void after_struct(Pair p) {}
    __global__ void __attribute__((noinline, aligned(8))) attributed(int* a) {}
    template <typename T,
              int N>
    __global__ void templated(T* a) {}
    __global__ void __launch_bounds__((256), 2) nested_bounds(int* a) {}
    int __global__x = 0;
  )src";
  EXPECT_EQ(opkit::find_kernel_names(source),
            (std::vector<std::string>{"after_struct", "attributed", "nested_bounds"}));
}

// Name expressions are evaluated at file scope, so a kernel in a namespace needs its qualified
// name; a kernel inside a #define is a pattern, not a kernel (issue 16 #9).
TEST(FindKernelNames, NamespacedKernelsAreQualifiedAndMacroBodiesSkipped) {
  const char* source = R"src(
    namespace ns { __global__ void in_ns(int* a) {} }
    namespace outer::inner {
      struct S { int x; };
      namespace { __global__ void unnamed(int* a) {} }
      __global__ void nested(int* a) { if (a) { a[0] = 1; } }
    }
    using namespace ns;
    namespace alias = outer::inner;
    extern "C" { __global__ void c_block(int* a) {} }
    #define KERNEL(n) __global__ void n(int* a)
    #define LONG_KERNEL(n) \
      __global__ void n##_long(int* a)
    KERNEL(k1) {}
    __global__ void top(int* a) {}
  )src";
  EXPECT_EQ(opkit::find_kernel_names(source),
            (std::vector<std::string>{"ns::in_ns", "outer::inner::unnamed", "outer::inner::nested", "c_block", "top"}));
}

TEST(CompiledProgram, SerializeRoundTripsEveryField) {
  opkit::CompiledProgram p;
  p.format = opkit::BinaryFormat::ptx;
  p.target = "compute_90";
  p.source_name = "x.cu";
  p.binary = {1, 2, 3, 0, 255};
  p.log = "warning: something";
  p.lowered_names = {{"k", "_Z1kv"}, {"f<int>", "_Z1fIiEvv"}};
  opkit::CompiledProgram q;
  ASSERT_TRUE(opkit::CompiledProgram::deserialize(p.serialize(), q));
  EXPECT_EQ(q.format, p.format);
  EXPECT_EQ(q.target, p.target);
  EXPECT_EQ(q.source_name, p.source_name);
  EXPECT_EQ(q.binary, p.binary);
  EXPECT_EQ(q.log, p.log);
  EXPECT_EQ(q.lowered_names, p.lowered_names);
}

TEST(CompiledProgram, DeserializeRejectsEveryTruncationAndRandomDamage) {
  opkit::CompiledProgram p;
  p.target = "sm_90";
  p.binary.assign(100, 7);
  p.lowered_names = {{"k", "k"}};
  auto bytes = p.serialize();
  opkit::CompiledProgram out;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_FALSE(opkit::CompiledProgram::deserialize(cut, out)) << "truncated to " << n;
  }
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(opkit::CompiledProgram::deserialize(longer, out));
  std::mt19937 rng(std::random_device{}());
  auto damaged = bytes;
  damaged[rng() % 8] ^= 0x40;  // magic
  EXPECT_FALSE(opkit::CompiledProgram::deserialize(damaged, out));
}

TEST(Error, RendersStageCodeKernelOptionsAndLogAsOneBlock) {
  opkit::Error e = opkit::Error(opkit::Errc::compile, "nvrtcCompileProgram", "compilation failed")
                       .with_code(6, "NVRTC_ERROR_COMPILATION")
                       .with_kernel("k")
                       .with_options({"-DX=1"})
                       .with_log("a.cu(3): error: boom");
  std::string text = e.what();
  EXPECT_EQ(text.rfind("opkit: nvrtcCompileProgram: compilation failed", 0), 0u);
  for (const char* piece : {"NVRTC_ERROR_COMPILATION", "kernel:  k", "-DX=1", "a.cu(3): error: boom"})
    EXPECT_NE(text.find(piece), std::string::npos) << piece;
  // The throw's source location is for whoever debugs opkit (OPKIT_VERBOSE), not in a user's message.
  if (std::getenv("OPKIT_VERBOSE") == nullptr) {
    EXPECT_EQ(text.find("test_program.cpp"), std::string::npos) << text;
  }
  EXPECT_NE(std::string(e.where().file_name()).find("test_program.cpp"), std::string::npos);
  EXPECT_EQ(e.kind(), opkit::Errc::compile);
  EXPECT_EQ(e.code(), 6);
}

TEST(ProgramDefine, IntegersCarryTheirTypeSuffix) {
  auto spec = opkit::Program("").define("A", 5).define("B", 7u).define("C", std::uint64_t{9}).spec();
  EXPECT_EQ(spec.defines[0].second, "5");
  EXPECT_EQ(spec.defines[1].second, "7u");
  EXPECT_EQ(spec.defines[2].second, "9ull");
}

// NVRTC would compile only the text before a NUL and the host compiler skips it: every backend
// refuses such a source with the byte's offset, before compiling, and the same for a header.
void expect_nul_refused(const opkit::Target& target) {
  const std::string source("__global__ void a(long long* o) { o[0] = 1; }\n\0garbage\n", 55);
  ASSERT_EQ(source.find('\0'), 46u);
  try {
    (void)opkit::compile(opkit::Program(source).name("nul.cu"), target);
    ADD_FAILURE() << target.text() << " compiled a source with a NUL byte";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("nul.cu holds a NUL byte at offset 46"), std::string::npos) << e.what();
  }
  opkit::Program with_header("#include \"h.cuh\"\n__global__ void b(int* o) { o[0] = H; }\n");
  with_header.header("h.cuh", std::string("#define H 1\n\0", 13));
  opkit::KernelCache no_cache = opkit::KernelCache::disabled();
  EXPECT_THROW((void)opkit::build(with_header, target, no_cache), opkit::Error);
}

TEST(CompileSource, NulByteIsRefusedWithItsOffsetByNvrtc) {
  OPKIT_REQUIRE_NVRTC();
  expect_nul_refused(opkit::Target::cuda("sm_90"));
}

TEST(CompileSource, NulByteIsRefusedWithItsOffsetByTheCpuBackend) {
  expect_nul_refused(opkit::Target::cpu());
}

// Found by tests/fuzz/fuzz_compiled_program: names out of order were accepted (and re-serialized
// differently), a repeated name silently dropped one of its symbols.
TEST(CompiledProgramFormat, LoweredNamesOutOfOrderOrRepeatedAreDamage) {
  opkit::CompiledProgram program;
  program.binary = {1, 2, 3};
  program.lowered_names = {{"a", "_Z1av"}, {"b", "_Z1bv"}};
  const std::vector<std::uint8_t> good = program.serialize();
  opkit::CompiledProgram out;
  ASSERT_TRUE(opkit::CompiledProgram::deserialize(good, out));
  EXPECT_EQ(out.serialize(), good);
  // Each name is <u64 length><bytes>, so the two keys sit at known places: swap "a" and "b".
  const std::size_t tail = good.size() - (2 * (8 + 1) + 2 * (8 + 5));
  auto swapped = good;
  ASSERT_EQ(swapped[tail + 8], 'a');
  ASSERT_EQ(swapped[tail + 8 + 1 + 8 + 5 + 8], 'b');
  std::swap(swapped[tail + 8], swapped[tail + 8 + 1 + 8 + 5 + 8]);
  EXPECT_FALSE(opkit::CompiledProgram::deserialize(swapped, out));
  auto repeated = good;
  repeated[tail + 8 + 1 + 8 + 5 + 8] = 'a';
  EXPECT_FALSE(opkit::CompiledProgram::deserialize(repeated, out));
}

}  // namespace
