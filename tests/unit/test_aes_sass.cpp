// The constant-time check of the AES kernels' machine code: the embedded AES source compiles
// under NVRTC for sm_90, and tools/aes_sass_check.py finds no shared or local memory access, no
// register-indexed constant load, and no load in the AES rounds whose address could depend on the
// state (docs/ciphers-aes.md explains the rules). The SASS part needs cuobjdump ($CUOBJDUMP or
// PATH) and python3, and skips without them.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "nvrtc_required.hpp"
#include "opkit/target.hpp"
#include "ops/cipher/aes_kernels.hpp"

namespace {

bool on_path(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

TEST(AesSass, KernelsCompileForSm90AndTheirSassHasNoDataDependentLoads) {
  OPKIT_REQUIRE_NVRTC();
  const opkit::CompiledProgram compiled = opkit::compile(opkit::ops::aes::aes_program(), opkit::Target::cuda("sm_90"));
  ASSERT_EQ(compiled.format, opkit::BinaryFormat::cubin);
  ASSERT_FALSE(compiled.binary.empty());

  const char* env = std::getenv("CUOBJDUMP");
  const std::string cuobjdump = env != nullptr && *env != '\0' ? env : "cuobjdump";
  if (!on_path(cuobjdump) || !on_path("python3")) GTEST_SKIP() << "no cuobjdump or python3 to read the SASS";

  const auto dir = std::filesystem::temp_directory_path() / ("opkit-aes-sass-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto cubin = dir / "aes.cubin";
  std::ofstream(cubin, std::ios::binary)
      .write(reinterpret_cast<const char*>(compiled.binary.data()),
             static_cast<std::streamsize>(compiled.binary.size()));
  const std::string script = std::string(OPKIT_TEST_DATA_DIR) + "/../../tools/aes_sass_check.py";
  const std::string command = "CUOBJDUMP='" + cuobjdump + "' python3 '" + script + "' '" + cubin.string() + "' 2>&1";
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = ::pclose(pipe);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("aes_ctr_masked: round loop"), std::string::npos) << output;
  EXPECT_NE(output.find("aes_sass_check: ok"), std::string::npos) << output;
}

}  // namespace
