// Prebuilt CUDA binaries recognised from their bytes (src/backend/cuda/cuda_binary_file): cubins
// and PTX from NVRTC are described right, anything else is refused, damaged images are safe; and
// Device::load_file's own errors on every machine.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "backend/cuda/cuda_binary_file.hpp"
#include "nvrtc_required.hpp"
#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/module.hpp"
#include "opkit/target.hpp"

namespace {

constexpr const char* kSource = R"(
  extern "C" __global__ void plain(int* a) { a[0] = 1; }
  __global__ void mangled(float* a, int n) { if (n) a[0] = 2; }
  __device__ int counter;
)";

TEST(CudaBinaryFile, CubinIsDescribedWithItsTargetAndKernelSymbols) {
  OPKIT_REQUIRE_NVRTC();
  const auto compiled = opkit::compile(opkit::Program(kSource), opkit::Target::cuda("sm_90"));
  ASSERT_EQ(compiled.format, opkit::BinaryFormat::cubin);
  const auto found = opkit::cuda::recognize_cuda_binary(compiled.binary, "k.cubin");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->format, opkit::BinaryFormat::cubin);
  EXPECT_EQ(found->target, "sm_90");
  EXPECT_EQ(found->source_name, "k.cubin");
  EXPECT_EQ(found->binary, compiled.binary);
  const std::string mangled = compiled.lowered_names.at("mangled");
  EXPECT_EQ(found->lowered_names, (std::map<std::string, std::string>{{"plain", "plain"}, {mangled, mangled}}));
}

TEST(CudaBinaryFile, PtxIsDescribedWithItsVirtualTarget) {
  OPKIT_REQUIRE_NVRTC();
  const auto compiled = opkit::compile(opkit::Program(kSource), opkit::Target::cuda("compute_80"));
  ASSERT_EQ(compiled.format, opkit::BinaryFormat::ptx);
  const auto found = opkit::cuda::recognize_cuda_binary(compiled.binary, "k.ptx");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->format, opkit::BinaryFormat::ptx);
  EXPECT_EQ(found->target, "compute_80");
}

TEST(CudaBinaryFile, OtherBytesAreRefusedAndDamagedCubinsAreSafe) {
  for (const std::string& text : std::vector<std::string>{"", "hello", "\177ELF", ".version 8.0\n", ".target sm_90\n",
                                 std::string(".version 8.0\n.target sm_90\n\0junk", 30)})
    EXPECT_FALSE(opkit::cuda::recognize_cuda_binary({text.begin(), text.end()}, "x").has_value()) << text;
  OPKIT_REQUIRE_NVRTC();
  const auto good = opkit::compile(opkit::Program(kSource), opkit::Target::cuda("sm_90")).binary;
  for (std::size_t keep = 0; keep < good.size(); keep += 1 + keep / 8)
    (void)opkit::cuda::recognize_cuda_binary({good.begin(), good.begin() + static_cast<long>(keep)}, "cut");
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 500; ++round) {
    std::vector<std::uint8_t> bad = good;
    for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips) bad[rng() % bad.size()] = rng();
    (void)opkit::cuda::recognize_cuda_binary(std::move(bad), "mutated");  // ASan/UBSan watch these
  }
}

opkit::Errc load_file_error(const opkit::Device& device, const std::string& path) {
  try {
    (void)device.load_file(path);
  } catch (const opkit::Error& error) {
    return error.kind();
  }
  ADD_FAILURE() << "load_file(" << path << ") did not throw";
  return opkit::Errc::runtime;
}

TEST(CudaBinaryFile, LoadFileNamesMissingFilesDirectoriesAndForeignFormats) {
  const opkit::Device cpu = opkit::Device::cpu();
  const auto dir = std::filesystem::temp_directory_path() / ("opkit-load-file-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_EQ(load_file_error(cpu, (dir / "absent.cubin").string()), opkit::Errc::not_found);
  EXPECT_EQ(load_file_error(cpu, dir.string()), opkit::Errc::io);
  std::ofstream(dir / "k.cubin") << "\x7f" "ELF and nothing else";
  EXPECT_EQ(load_file_error(cpu, (dir / "k.cubin").string()), opkit::Errc::load);
  std::filesystem::remove_all(dir);
}

}  // namespace
