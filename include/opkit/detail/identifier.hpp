// The characters of C++ identifiers (ASCII, as CUDA C++ kernels spell them), for the source
// scans of the core (kernel names) and of the CPU backend (its rewrite of kernel sources).
#pragma once

namespace opkit::detail {

constexpr bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool is_identifier_char(char c) {
  return is_identifier_start(c) || (c >= '0' && c <= '9');
}

}  // namespace opkit::detail
