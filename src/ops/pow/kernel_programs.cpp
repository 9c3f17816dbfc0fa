// Builds the mining kernels' Programs (see kernel_programs.hpp).
#include "kernel_programs.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "opkit/error.hpp"
#include "opkit_embedded.hpp"
#include "sha256/kernels/sha256_primitives.cuh"

namespace opkit::ops::detail {
namespace {

// An embedded kernel file by its logical name ("pow/bitcoin_mine.cu").
std::string embedded(const std::string& name) {
  const std::string_view text = opkit::detail::embedded_source(name);
  if (text.empty()) throw Error(Errc::not_found, "mine", "kernel source " + name + " is not embedded");
  return std::string(text);
}

std::string word(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08xu", v);
  return text;
}

Program kernel_program(const std::string& file, const PowKernelTuning& tuning) {
  Program program(embedded("pow/" + file));
  program.name(file)
      .header("sha256_primitives.cuh", embedded("sha256/sha256_primitives.cuh"))
      .header("pow_sha256.cuh", embedded("pow/pow_sha256.cuh"));
  if (tuning.const_add_on_fma) program.define("POW_CONST_ADD_ON_FMA");
  if (tuning.const_in_iadd3) program.define("POW_CONST_IN_IADD3");
  return program;
}

void define_midstate(Program& program, const MinePlan& plan) {
  for (int i = 0; i < 8; ++i) program.define("POW_MID" + std::to_string(i), word(plan.midstate[i]));
}

}  // namespace

std::uint32_t quick_test_top(const MinePlan& plan, const PowKernelTuning& tuning) {
  // Both schemes' kernels compare the hash's most significant word (Bitcoin: of the little-endian
  // number) with the target's.
  const std::uint32_t top = plan.target.top_word();
  return tuning.quick_test_top ? std::max(*tuning.quick_test_top, top) : top;
}

PowBitcoinJobArgs bitcoin_job_args(const MinePlan& plan, const PowKernelTuning& tuning) {
  PowBitcoinJobArgs args{};
  for (int i = 0; i < 8; ++i) args.midstate[i] = plan.midstate[i];
  for (int i = 0; i < 3; ++i) args.tail[i] = plan.header_tail[i];
  // Rounds 0..2 of the second block (FIPS 180-4 §6.2.2 step 3) read its words 0..2, the header's
  // words 16..18, and not the nonce: the kernel starts at round 3 from this state.
  std::uint32_t s[8];
  for (int i = 0; i < 8; ++i) s[i] = plan.midstate[i];
  for (int t = 0; t < 3; ++t) {
    const std::uint32_t t1 = s[7] + sha256_big_sigma1(s[4]) + sha256_ch(s[4], s[5], s[6]) + sha256_k(t) + args.tail[t];
    const std::uint32_t t2 = sha256_big_sigma0(s[0]) + sha256_maj(s[0], s[1], s[2]);
    for (int i = 7; i > 0; --i) s[i] = s[i - 1];
    s[4] += t1;
    s[0] = t1 + t2;
  }
  for (int i = 0; i < 8; ++i) args.state3[i] = s[i];
  args.target_top = quick_test_top(plan, tuning);
  return args;
}

Program bitcoin_program(const MinePlan& plan, bool specialised, const PowKernelTuning& tuning) {
  Program program = kernel_program("bitcoin_mine.cu", tuning);
  if (tuning.min_blocks < 0 || tuning.min_blocks > 8)
    throw Error(Errc::invalid_argument, "mine", "min_blocks must be 0..8, got " + std::to_string(tuning.min_blocks));
  // The generic kernel keeps its 40 registers (6 blocks per SM): capped at 32 it spills 7 words
  // per nonce and gains 28 ALU instructions (1,846 against 1,818), while on the H200 40 registers
  // ran as fast as the capped specialised kernel (8.43-8.50 GH/s against 8.41, docs/perf-pow.md).
  if (!specialised) return program.define("POW_GENERIC");
  if (tuning.min_blocks > 0) program.define("POW_MIN_BLOCKS", tuning.min_blocks);
  define_midstate(program, plan);
  for (int i = 0; i < 3; ++i) program.define("POW_W" + std::to_string(i), word(plan.header_tail[i]));
  program.define("POW_TARGET_TOP", word(quick_test_top(plan, tuning)));
  return program;
}

PowDataJobArgs data_job_args(const MinePlan& plan, int digits, const PowKernelTuning& tuning) {
  if (digits < 1 || digits > 20)
    throw Error(Errc::invalid_argument, "mine (data)",
                "nonce digit count must be 1..20, got " + std::to_string(digits));
  PowDataJobArgs args{};
  const std::size_t prefix = plan.prefix.size();
  const std::size_t used = prefix + static_cast<std::size_t>(digits);
  const int blocks = used + 9 <= 64 ? 1 : 2;
  // The tail with '0' for every digit; the kernel adds each digit's value.
  std::uint8_t tail[128] = {};
  for (std::size_t i = 0; i < prefix; ++i) tail[i] = static_cast<std::uint8_t>(plan.prefix[i]);
  for (std::size_t i = prefix; i < used; ++i) tail[i] = '0';
  tail[used] = 0x80;
  const std::uint64_t bits = 8 * (plan.data.size() + static_cast<std::size_t>(digits));
  for (int i = 0; i < 8; ++i) tail[64 * blocks - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
  for (int i = 0; i < 8; ++i) args.midstate[i] = plan.midstate[i];
  for (int i = 0; i < 32; ++i) args.tail[i] = load_be32(tail + 4 * i);
  args.prefix_len = static_cast<std::uint32_t>(prefix);
  args.digits = static_cast<std::uint32_t>(digits);
  args.blocks = static_cast<std::uint32_t>(blocks);
  args.target_top = quick_test_top(plan, tuning);
  return args;
}

Program data_program(const MinePlan& plan, int digits, const PowKernelTuning& tuning) {
  const PowDataJobArgs args = data_job_args(plan, digits, tuning);
  Program program = kernel_program("data_mine.cu", tuning);
  define_midstate(program, plan);
  program.define("POW_PREFIX_LEN", static_cast<int>(args.prefix_len))
      .define("POW_DIGITS", digits)
      .define("POW_BLOCKS", static_cast<int>(args.blocks))
      .define("POW_TARGET_TOP", word(args.target_top));
  for (int i = 0; i < 16 * static_cast<int>(args.blocks); ++i)
    program.define("POW_TAIL" + std::to_string(i), word(args.tail[i]));
  return program;
}

Program data_generic_program(const PowKernelTuning& tuning) {
  return kernel_program("data_mine.cu", tuning).define("POW_GENERIC");
}

const KernelSet<PowProgramRequest>& pow_kernels() {
  // Never destroyed, like every kernel set (opkit/kernel_set.hpp).
  static const auto* set = [] {
    auto program = [](const PowProgramRequest& r) {
      if (r.plan.scheme == PowScheme::bitcoin) return bitcoin_program(r.plan, !r.generic, r.tuning);
      return r.generic ? data_generic_program(r.tuning) : data_program(r.plan, r.digits, r.tuning);
    };
    auto* s = new KernelSet<PowProgramRequest>("mine");
    s->add("cpu", {program, {.block = 32, .blocks_per_unit = 4}});
    s->add_language("cuda", {program, {.block = 256}});
    return s;
  }();
  return *set;
}

}  // namespace opkit::ops::detail

namespace opkit::ops {

const KernelSupport& mine_support() {
  return detail::pow_kernels();
}

}  // namespace opkit::ops
