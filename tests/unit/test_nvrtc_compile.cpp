// NVRTC compile tests: these need the CUDA toolkit's NVRTC but no GPU, so they run in CI.
#include <gtest/gtest.h>

#include "nvrtc_required.hpp"
#include "opkit/error.hpp"
#include "opkit/program.hpp"
#include "opkit/target.hpp"

namespace {

constexpr const char* kTutorialKernel = R"(
__global__ void test_kernel(float *a) {
  int idx = threadIdx.x + threadIdx.y * 4;
  a[idx] = 2.0f * idx;
}
)";

TEST(NvrtcCompile, GoodSourceBecomesCubinForTheNamedArch) {
  OPKIT_REQUIRE_NVRTC();
  auto compiled = opkit::compile(opkit::Program(kTutorialKernel).name("tutorial.cu"), opkit::Target::cuda("sm_90"));
  EXPECT_EQ(compiled.format, opkit::BinaryFormat::cubin);
  EXPECT_EQ(compiled.target, "sm_90");
  ASSERT_GE(compiled.binary.size(), 4u);
  // A cubin is an ELF file.
  EXPECT_EQ(compiled.binary[0], 0x7f);
  EXPECT_EQ(compiled.binary[1], 'E');
  EXPECT_EQ(compiled.binary[2], 'L');
  EXPECT_EQ(compiled.binary[3], 'F');
}

TEST(NvrtcCompile, PyCudaStyleKernelNameResolvesToItsMangledSymbol) {
  OPKIT_REQUIRE_NVRTC();
  auto compiled = opkit::compile(opkit::Program(kTutorialKernel), opkit::Target::cuda("sm_80"));
  ASSERT_EQ(compiled.lowered_names.count("test_kernel"), 1u);
  EXPECT_EQ(compiled.lowered_names.at("test_kernel"), "_Z11test_kernelPf");
}

TEST(NvrtcCompile, BrokenSourceThrowsCompileErrorWhoseLogNamesFileAndLine) {
  OPKIT_REQUIRE_NVRTC();
  const char* broken = "__global__ void k(int* a) {\n  a[0] = 1;\n  a[1] = NOT_DEFINED;\n}\n";
  try {
    opkit::compile(opkit::Program(broken).name("broken.cu"), opkit::Target::cuda("sm_90"));
    FAIL() << "a broken kernel compiled";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::compile);
    EXPECT_NE(e.log().find("broken.cu(3)"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("\"NOT_DEFINED\" is undefined"), std::string::npos) << e.log();
    EXPECT_NE(std::string(e.what()).find("broken.cu(3)"), std::string::npos);
    EXPECT_FALSE(e.options().empty());
    EXPECT_EQ(e.source_name(), "broken.cu");
  }
}

TEST(NvrtcCompile, TutorialKernelWithStdintAndMemcpyCompilesUnchanged) {
  OPKIT_REQUIRE_NVRTC();
  const char* source =
      "#include <stdint.h>\n"
      "__global__ void k(char *data, uint64_t *nonce) { char local[80]; memcpy(local, data, 76); "
      "memcpy(local + 76, nonce, 4); data[0] = local[79]; }\n";
  auto compiled = opkit::compile(opkit::Program(source), opkit::Target::cuda("sm_90"));
  EXPECT_FALSE(compiled.binary.empty());
  EXPECT_EQ(compiled.lowered_names.count("k"), 1u);
}

TEST(NvrtcCompile, StandardHeaderStandInsCoverTheCommonHeaders) {
  OPKIT_REQUIRE_NVRTC();
  const char* source =
      "#include <cstdint>\n#include <cstddef>\n#include <stddef.h>\n#include <limits.h>\n#include <climits>\n"
      "#include <stdbool.h>\n#include <string.h>\n#include <cstring>\n#include <stdio.h>\n#include <assert.h>\n"
      "#include <math.h>\n"
      "static_assert(sizeof(std::uint64_t) == 8 && sizeof(int32_t) == 4 && sizeof(size_t) == 8, \"widths\");\n"
      "static_assert(INT_MAX == 2147483647 && UINT32_MAX == 4294967295U && CHAR_BIT == 8, \"limits\");\n"
      "extern \"C\" __global__ void k(char* d, std::size_t n) {\n"
      "  bool ok = true; memset(d, 0, n); d[0] = memcmp(d, d + 1, 1) + (int)strlen(d) + ok; assert(n > 0);\n"
      "  printf(\"%d\\n\", (int)sqrtf(4.0f));\n}\n";
  auto compiled = opkit::compile(opkit::Program(source), opkit::Target::cuda("sm_90"));
  EXPECT_FALSE(compiled.binary.empty());
}

TEST(NvrtcCompile, DefinesReachTheSource) {
  OPKIT_REQUIRE_NVRTC();
  const char* source =
      "#ifndef WIDTH\n#error WIDTH must be defined\n#endif\n"
      "static_assert(WIDTH == 256, \"WIDTH has the defined value\");\n"
      "#ifndef FLAG\n#error FLAG must be defined\n#endif\n"
      "__global__ void k(float* a) { a[threadIdx.x % WIDTH] = 1.0f; }\n";
  EXPECT_NO_THROW(
      opkit::compile(opkit::Program(source).define("WIDTH", 256).define("FLAG"), opkit::Target::cuda("sm_90")));
  // And a different value really changes what is compiled.
  EXPECT_THROW(opkit::compile(opkit::Program(source).define("WIDTH", 128).define("FLAG"), opkit::Target::cuda("sm_90")),
               opkit::Error);
}

TEST(NvrtcCompile, InMemoryHeadersAndOptionsAreUsed) {
  OPKIT_REQUIRE_NVRTC();
  const char* source = "#include \"params.cuh\"\n__global__ void k(int* a) { a[0] = MAGIC; }\n";
  auto compiled = opkit::compile(opkit::Program(source).header("params.cuh", "#define MAGIC 42\n").option("-lineinfo"),
                                 opkit::Target::cuda("sm_90"));
  EXPECT_FALSE(compiled.binary.empty());
}

TEST(NvrtcCompile, TemplateKernelsResolveThroughNameExpressions) {
  OPKIT_REQUIRE_NVRTC();
  const char* source = "template <class T> __global__ void scale(T* a, T s) { a[threadIdx.x] *= s; }\n";
  auto compiled = opkit::compile(opkit::Program(source).name_expression("scale<float>"), opkit::Target::cuda("sm_90"));
  ASSERT_EQ(compiled.lowered_names.count("scale<float>"), 1u);
  EXPECT_EQ(compiled.lowered_names.at("scale<float>"), "_Z5scaleIfEvPT_S0_");
}

TEST(NvrtcCompile, UnknownArchIsAClearError) {
  OPKIT_REQUIRE_NVRTC();
  try {
    opkit::compile(opkit::Program(kTutorialKernel), opkit::Target::cuda("gfx90a"));
    FAIL();
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
    EXPECT_NE(e.message().find("gfx90a"), std::string::npos);
  }
}

}  // namespace
