// Static shared memory per kernel from a kernel object's ELF symbol table (see static_shared.hpp).
#include "static_shared.hpp"

#include <cxxabi.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string_view>

#include "elf_symbols.hpp"

namespace opkit::cpu {
namespace {

// The shim's own thread-locals, the launch variables (namespace-scope statics: _ZL<length><name>),
// are not shared memory.
bool is_launch_variable(std::string_view name) {
  return name == "_ZL9threadIdx" || name == "_ZL8blockIdx" || name == "_ZL8blockDim" || name == "_ZL7gridDim";
}

// "k(int*)::table" -> "k"; "void f<int>(int*)::s" -> "f<int>"; "" when `demangled` is not a
// function-local name.
std::string enclosing_function(const std::string& demangled) {
  int depth = 0;
  std::size_t word = 0;
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    const char c = demangled[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (depth != 0) continue;
    if (c == ' ') word = i + 1;  // after a template function's return type
    if (c == '(') return demangled.substr(word, i - word);
  }
  return {};
}

// Sizes from a damaged object must not wrap around to a small total that passes the limit.
std::size_t saturating_add(std::size_t a, std::uint64_t b) {
  return b > SIZE_MAX - a ? SIZE_MAX : a + static_cast<std::size_t>(b);
}

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : std::string();
}

}  // namespace

std::map<std::string, std::size_t> static_shared_bytes(const std::vector<std::uint8_t>& elf,
                                                       const std::vector<std::string>& kernels) {
  // Every thread-local object, then those that have a guard (a dynamically initialised one: an
  // `extern __shared__` pointer; a __shared__ variable cannot have an initialiser).
  std::map<std::string, std::size_t, std::less<>> objects;
  std::set<std::string, std::less<>> guarded;
  bool any = false;
  for_each_symbol(elf, [&](std::string_view name, const Elf64_Sym& symbol) {
    any = true;
    if (ELF64_ST_TYPE(symbol.st_info) != STT_TLS || symbol.st_size == 0) return;
    if (name.substr(0, 4) == "_ZGV") {
      guarded.emplace("_Z" + std::string(name.substr(4)));
    } else if (!name.empty() && name != "__tls_guard" && !is_launch_variable(name)) {
      std::size_t& total = objects[std::string(name)];
      total = saturating_add(total, symbol.st_size);
    }
  });
  std::map<std::string, std::size_t> result;
  if (!any) return result;
  std::size_t everywhere = 0;  // at namespace scope
  std::map<std::string, std::size_t> local;
  for (const auto& [name, bytes] : objects) {
    if (guarded.count(name) != 0) continue;
    std::size_t& total = name.rfind("_ZZ", 0) != 0 ? everywhere : local[enclosing_function(demangle(name.c_str()))];
    total = saturating_add(total, bytes);
  }
  for (const std::string& kernel : kernels) result[kernel] = saturating_add(everywhere, local[kernel]);
  return result;
}

}  // namespace opkit::cpu
