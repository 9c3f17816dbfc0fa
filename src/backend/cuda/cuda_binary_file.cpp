// Cubin and PTX recognition (see cuda_binary_file.hpp).
#include "cuda_binary_file.hpp"

#include <cstring>
#include <string_view>

#include "cubin_params.hpp"

namespace opkit::cuda {
namespace {

constexpr std::uint16_t kMachineCuda = 190;  // EM_CUDA
constexpr std::uint8_t kCudaAbiV2 = 8;       // e_ident[EI_ABIVERSION] of CUDA >= 12.8 cubins

// "sm_90" from a cubin's e_flags: the SM number is bits 0-7 in the first CUDA ELF ABI, bits 8-15
// in the second (as LLVM's EF_CUDA_SM / EF_CUDA_SM_MASK describe them). "" when unreadable.
std::string cubin_target(const std::vector<std::uint8_t>& elf) {
  std::uint32_t flags = 0;
  std::memcpy(&flags, elf.data() + 0x30, sizeof flags);
  const unsigned sm = elf[8] >= kCudaAbiV2 ? (flags >> 8) & 0xff : flags & 0xff;
  return sm == 0 ? std::string() : "sm_" + std::to_string(sm);
}

bool is_cubin(const std::vector<std::uint8_t>& bytes) {
  static constexpr std::uint8_t magic[] = {0x7f, 'E', 'L', 'F', 2 /*64-bit*/, 1 /*little-endian*/};
  if (bytes.size() < 64 || std::memcmp(bytes.data(), magic, sizeof magic) != 0) return false;
  std::uint16_t machine = 0;
  std::memcpy(&machine, bytes.data() + 18, sizeof machine);
  return machine == kMachineCuda;
}

// The value of PTX's `.target sm_90` directive as "compute_90" (how opkit names PTX targets), or
// nullopt when the text has no .version and .target directives, or holds a NUL before its end.
std::optional<std::string> ptx_target(const std::vector<std::uint8_t>& bytes) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
  if (text.find('\0') != std::string_view::npos || text.find(".version") == std::string_view::npos) return std::nullopt;
  const std::size_t at = text.find(".target");
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t begin = text.find_first_not_of(" \t", at + 7);
  if (begin == std::string_view::npos) return std::nullopt;
  const std::size_t end = text.find_first_of(" \t\r\n,", begin);
  std::string target(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
  if (target.starts_with("sm_")) target.replace(0, 3, "compute_");
  return target;
}

}  // namespace

std::optional<CompiledProgram> recognize_cuda_binary(std::vector<std::uint8_t> bytes, const std::string& name) {
  CompiledProgram program;
  program.source_name = name;
  if (is_cubin(bytes)) {
    program.format = BinaryFormat::cubin;
    program.target = cubin_target(bytes);
    // Every kernel has a .nv.info.<symbol> section; its symbol is the only name a file gives.
    for (const auto& [symbol, sizes] : cubin_param_sizes(bytes)) program.lowered_names[symbol] = symbol;
  } else if (auto target = ptx_target(bytes)) {
    program.format = BinaryFormat::ptx;
    program.target = *target;
  } else {
    return std::nullopt;
  }
  program.binary = std::move(bytes);
  return program;
}

}  // namespace opkit::cuda
