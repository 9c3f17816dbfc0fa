// The embedded SHA-256 kernel sources compile under NVRTC for every specialisation shape (no GPU
// needed). Their results on every device: tests/conformance/test_sha256.cpp.
#include <gtest/gtest.h>

#include "nvrtc_required.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/ops/sha256.hpp"
#include "opkit/target.hpp"

namespace {

using opkit::ops::HashAlgo;

TEST(Sha256Kernels, FixedLengthProgramCompilesUnderNvrtcForEveryPaddingShape) {
  OPKIT_REQUIRE_NVRTC();
  // One block, the 55/56-byte boundary (one or two tail blocks), whole blocks, unaligned loads.
  struct Shape {
    std::size_t len;
    unsigned load_align;
    HashAlgo algo;
  };
  for (Shape s : {Shape{0, 16, HashAlgo::sha256}, Shape{32, 16, HashAlgo::sha256}, Shape{55, 1, HashAlgo::sha256d},
                  Shape{56, 8, HashAlgo::sha256}, Shape{80, 16, HashAlgo::sha256d}, Shape{1024, 4, HashAlgo::sha256}}) {
    auto compiled =
        opkit::compile(opkit::ops::sha256_fixed_program(s.algo, s.len, s.load_align, 16), opkit::Target::cuda("sm_90"));
    EXPECT_EQ(compiled.format, opkit::BinaryFormat::cubin) << "length " << s.len;
    EXPECT_FALSE(compiled.binary.empty());
  }
}

TEST(Sha256Kernels, VariableLengthProgramCompilesUnderNvrtc) {
  OPKIT_REQUIRE_NVRTC();
  for (HashAlgo algo : {HashAlgo::sha256, HashAlgo::sha256d}) {
    auto compiled = opkit::compile(opkit::ops::sha256_variable_program(algo, 1), opkit::Target::cuda("sm_80"));
    EXPECT_FALSE(compiled.binary.empty());
  }
}

}  // namespace
