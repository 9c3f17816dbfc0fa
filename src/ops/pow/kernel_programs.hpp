// The mining kernels' Programs: the embedded sources specialised for one job with -D (midstate,
// constant message words, target), so that NVRTC folds everything that does not depend on the
// nonce. Device::compile caches each one in process and on disk.
#pragma once

#include <cstdint>
#include <optional>

#include "mine_plan.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/program.hpp"

namespace opkit::ops::detail {

// Which kernel a device runs.
enum class PowKernelChoice : std::uint8_t {
  // The library's choice. Bitcoin: the generic kernel only, compiled once per device (then read
  // from the disk cache) and never in the background: its ALU-pipe count per nonce is the
  // specialised kernel's, and a per-job compile (seconds) costs more than a whole 32-bit range
  // (half a second on an H200). Data: the generic kernel (while it compiles with a cold cache, the
  // host's own miner), and the job's specialised kernel compiled in the background once the
  // measured rate says the search will outlast `specialise_after_seconds`, then used when ready.
  adaptive,
  generic,      // only the generic kernel
  specialised,  // only the job's kernel, waiting for its compile
};

// Code-generation and kernel choices, exposed for the benchmark that compares them.
struct PowKernelTuning {
  PowKernelChoice kernel = PowKernelChoice::adaptive;
  // Sums with a job constant as IMAD too (-DPOW_CONST_ADD_ON_FMA), the formulation of the first
  // GPU runs: ptxas then holds IMAD's `one` in a vector register and register-bank reads bound the
  // kernel (4,051 bank cycles per Bitcoin nonce against 3,148; tools/sass_banks.py). Off (the
  // default): the constant is a VIADD, which runs on the FMA pipe as IMAD does.
  bool const_add_on_fma = false;
  // The job constant joined with two varying terms in one IADD3 on the ALU pipe
  // (-DPOW_CONST_IN_IADD3): the second session's default, 126 more ALU instructions per Bitcoin
  // nonce than the VIADD.
  bool const_in_iadd3 = false;
  // Specialised Bitcoin kernel: blocks of 256 threads that must fit on one SM (-DPOW_MIN_BLOCKS,
  // __launch_bounds__); 8 caps it at 32 registers for full occupancy (a 3-load spill per Bitcoin nonce, L1 hits);
  // 0 leaves ptxas free (40 registers, 6 blocks, 75%). The H200 profile showed too few eligible
  // warps to keep the ALU pipe busy at 75%. (The data kernel keeps its 48: at 40 or
  // 32 it spills its digits, 26..40 local loads and stores per nonce.)
  int min_blocks = 8;
  // GPU launches: nonces per thread, the grid sized to cover the launch (many waves), so that the
  // block scheduler refills an SM as soon as one of its blocks ends. 0: one wave of resident
  // blocks whose threads split the whole launch, which left warps idle at the end (achieved
  // occupancy 49% of 75% in the profile).
  int nonces_per_thread = 64;
  // Data mode, adaptive: the specialised kernel (2.3x the generic one's rate) is compiled only
  // when the search is expected to last longer than this at the generic kernel's rate (the
  // expected nonces to a hit, 2^bits, or the rest of the range when that is shorter): a compile
  // takes 1..3 s, and a search ends only when its compiles have (kernel_miner.hpp).
  double specialise_after_seconds = 10;
  // Candidates a launch reports in full (pow_report); with more, the host re-searches the launch
  // in pieces (kernel_miner.cpp). Real targets give a false candidate per 2^32 nonces.
  std::uint32_t candidate_slots = 64;
  // Test knob: the quick test's threshold for the hash's top 32 bits, instead of the target's top
  // word (never below it, so no qualifying nonce is lost). A high one makes the quick test pass
  // often, as it never does with real targets, to exercise the host's checks and the overflow path.
  std::optional<std::uint32_t> quick_test_top;
};

// The quick test's threshold for this plan: the target's top word, or the tuning's knob.
std::uint32_t quick_test_top(const MinePlan& plan, const PowKernelTuning& tuning);

// The generic kernel's job argument (PowBitcoinJob in bitcoin_mine.cu): what does not depend on
// the nonce, precomputed here.
struct PowBitcoinJobArgs {
  std::uint32_t midstate[8];
  std::uint32_t state3[8];  // a..h after rounds 0..2 of the header's second block
  std::uint32_t tail[3];
  std::uint32_t target_top;  // the quick test's threshold
};
PowBitcoinJobArgs bitcoin_job_args(const MinePlan& plan, const PowKernelTuning& tuning = {});

// Kernel "pow_bitcoin" for this plan: specialised (-D job constants) or generic (the job from
// the kernel's argument, one program for every job).
Program bitcoin_program(const MinePlan& plan, bool specialised, const PowKernelTuning& tuning);
// Kernel "pow_data" for this plan's nonces of `digits` decimal digits.
Program data_program(const MinePlan& plan, int digits, const PowKernelTuning& tuning);

// The generic data kernel's job argument (PowDataJob in data_mine.cu) for nonces of `digits`
// decimal digits.
struct PowDataJobArgs {
  std::uint32_t midstate[8];
  std::uint32_t tail[32];
  std::uint32_t prefix_len;
  std::uint32_t digits;
  std::uint32_t blocks;
  std::uint32_t target_top;
};
PowDataJobArgs data_job_args(const MinePlan& plan, int digits, const PowKernelTuning& tuning = {});
// Kernel "pow_data" for every job (-DPOW_GENERIC): the job from its argument.
Program data_generic_program(const PowKernelTuning& tuning);

// What a device miner asks the kernel set for: the job's specialised kernel (of `digits` decimal
// digits in data mode) or the generic one.
struct PowProgramRequest {
  const MinePlan& plan;
  bool generic = false;
  int digits = 0;
  const PowKernelTuning& tuning;
};
// The mining kernels per backend: the CUDA C++ sources for every backend compiling CUDA C++
// (blocks of 256, as many as the registers allow), and on the CPU backend a few blocks of 32
// per core. Its kernels are per job, so they are compiled through Device::compile, not kept here.
const KernelSet<PowProgramRequest>& pow_kernels();

}  // namespace opkit::ops::detail
