// Writes the cubins of the SHA-256 batch kernels and the mining kernels exactly as the library
// compiles them (default variants, fixed jobs), for sm_90 through NVRTC with no GPU needed, so
// that tools/sass_table.py can compare their SASS per hash before and after a change.
//
// usage: opkit_kernel_cubins DIR [ONLY]   (then: python3 tools/sass_table.py DIR)
//   ONLY: write only the cubins whose name contains it
// Each file name ends in how sass_table.py counts one hash: `.whole` (the whole kernel: one
// message per thread, no loop), `.loop` (the first loop's body: the miners test one nonce per
// iteration), `.whole+14loop` (the 1 KiB kernel: its whole-block loop runs 15 times) or `.each`
// (the variable-length kernel: no one count, each loop body is listed).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "opkit/error.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/ops/sha256.hpp"
#include "opkit/target.hpp"
#include "ops/pow/kernel_programs.hpp"
#include "ops/pow/mine_plan.hpp"

namespace {

using opkit::CompiledProgram;
using opkit::Error;
using opkit::Program;
using opkit::ops::BitcoinJob;
using opkit::ops::BlockHeader;
using opkit::ops::DataJob;
using opkit::ops::HashAlgo;
using opkit::ops::sha256_fixed_program;
using opkit::ops::sha256_variable_program;
namespace detail = opkit::ops::detail;

// The genesis block's header: a fixed job, so that the specialised kernel is the same every run.
constexpr const char* genesis_header =
    "0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc"
    "3888a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c";

detail::MinePlan bitcoin_plan() {
  BitcoinJob job;
  job.header = BlockHeader::from_hex(genesis_header);
  return detail::make_plan(job);
}

detail::MinePlan data_plan(std::size_t length) {
  DataJob job{std::string(length, 'd'), 40, 0, std::nullopt};
  return detail::make_plan(job);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s DIR [ONLY]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1], only = argc == 3 ? argv[2] : "";
  try {
    std::filesystem::create_directories(dir);
    auto write = [&](const std::string& name, const Program& program) {
      if (name.find(only) == std::string::npos) return;
      const CompiledProgram compiled = opkit::compile(program, opkit::Target::cuda("sm_90"));
      std::ofstream(dir + "/" + name + ".cubin", std::ios::binary)
          .write(reinterpret_cast<const char*>(compiled.binary.data()),
                 static_cast<std::streamsize>(compiled.binary.size()));
      std::printf("%s\n", name.c_str());
      std::fflush(stdout);
    };
    // Batch kernels as Sha256Kernel launches them on aligned device buffers (16-byte loads and
    // stores, one message per thread). The 1 KiB kernel loops over its whole blocks after the
    // first: 15 trips.
    write("sha256_fixed_L32.whole", sha256_fixed_program(HashAlgo::sha256, 32, 16, 16));
    write("sha256_fixed_L64.whole", sha256_fixed_program(HashAlgo::sha256, 64, 16, 16));
    write("sha256_fixed_L1024.whole+14loop", sha256_fixed_program(HashAlgo::sha256, 1024, 16, 16));
    write("sha256d_fixed_L32.whole", sha256_fixed_program(HashAlgo::sha256d, 32, 16, 16));
    write("sha256d_fixed_L80.whole", sha256_fixed_program(HashAlgo::sha256d, 80, 16, 16));
    write("sha256_var.each", sha256_variable_program(HashAlgo::sha256, 16));
    // Miners: one nonce per iteration of their loop.
    const detail::PowKernelTuning tuning;
    write("bitcoin_mine_specialised.loop", detail::bitcoin_program(bitcoin_plan(), true, tuning));
    write("bitcoin_mine_generic.loop", detail::bitcoin_program(bitcoin_plan(), false, tuning));
    write("data_mine_20B.loop", detail::data_program(data_plan(20), 12, tuning));
    write("data_mine_100B.loop", detail::data_program(data_plan(100), 12, tuning));
    write("data_mine_generic.loop", detail::data_generic_program(tuning));
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
