// Walking a kernel object's .symtab (see elf_symbols.hpp).
#include "elf_symbols.hpp"

#include <cstring>

namespace opkit::cpu {

void for_each_symbol(const std::vector<std::uint8_t>& elf,
                     const std::function<void(std::string_view name, const Elf64_Sym& symbol)>& visit) {
  auto fits = [&](std::uint64_t offset, std::uint64_t bytes) {
    return offset <= elf.size() && bytes <= elf.size() - offset;
  };
  Elf64_Ehdr header;
  if (!fits(0, sizeof header)) return;
  std::memcpy(&header, elf.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shentsize != sizeof(Elf64_Shdr) ||
      !fits(header.e_shoff, std::uint64_t{header.e_shnum} * sizeof(Elf64_Shdr)))
    return;
  auto section = [&](std::size_t i) {
    Elf64_Shdr s;
    std::memcpy(&s, elf.data() + header.e_shoff + i * sizeof s, sizeof s);
    return s;
  };
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr symtab = section(i);
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= header.e_shnum || !fits(symtab.sh_offset, symtab.sh_size))
      continue;
    const Elf64_Shdr strtab = section(symtab.sh_link);
    if (!fits(strtab.sh_offset, strtab.sh_size) || strtab.sh_size == 0) continue;
    const char* strings = reinterpret_cast<const char*>(elf.data() + strtab.sh_offset);
    for (std::uint64_t at = 0; at + sizeof(Elf64_Sym) <= symtab.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym symbol;
      std::memcpy(&symbol, elf.data() + symtab.sh_offset + at, sizeof symbol);
      std::string_view name;
      if (symbol.st_name < strtab.sh_size)
        name = {strings + symbol.st_name, strnlen(strings + symbol.st_name, strtab.sh_size - symbol.st_name)};
      visit(name, symbol);
    }
    return;
  }
}

}  // namespace opkit::cpu
