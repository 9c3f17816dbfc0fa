// The static symbol table (.symtab) of a kernel object, read from its bytes: the kernels' static
// shared memory (static_shared.hpp) and module-scope variables (CpuModule::global) are found
// there, as the object is linked with hidden visibility and dlsym sees neither.
#pragma once

#include <elf.h>

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace opkit::cpu {

// Calls `visit(name, symbol)` for each entry of the first SHT_SYMTAB section of a 64-bit ELF
// image. Every offset is bounds-checked: a damaged or stripped image visits fewer or none.
void for_each_symbol(const std::vector<std::uint8_t>& elf,
                     const std::function<void(std::string_view name, const Elf64_Sym& symbol)>& visit);

}  // namespace opkit::cpu
