// How much static `__shared__` memory each kernel of a CPU kernel object uses, so that the CPU
// backend enforces the limits of the GPU it stands in for (48 KiB static per kernel, as ptxas
// does; static plus dynamic within a block's 227 KiB at launch, as cuLaunchKernel does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opkit::cpu {

// A GPU's limit on one kernel's static shared memory (ptxas: "uses too much shared data").
inline constexpr std::size_t kMaxStaticSharedBytes = 48 * 1024;

// Per kernel expression ("k", "ns::k", "f<int>"), the bytes of the `__shared__` variables it
// uses, read from the object's symbol table (they are thread-local objects there): those declared
// in the kernel's body, plus those at namespace scope (which the CPU backend cannot tie to one
// kernel, so they count for every kernel; the compiler drops those no kernel uses). Variables
// declared in a __device__ function are not counted: which kernels call it is not known here, and
// a limit must not refuse what a GPU accepts. Empty when the object has no symbol table.
std::map<std::string, std::size_t> static_shared_bytes(const std::vector<std::uint8_t>& elf,
                                                       const std::vector<std::string>& kernels);

}  // namespace opkit::cpu
