// Force-included by scripts/clang_tidy.sh, never by a build. clang-tidy 14 parses with clang 14,
// which lacks __builtin_source_location, so libstdc++'s <source_location> declares nothing and
// every file that includes opkit/error.hpp fails to parse. This stand-in declares the same
// interface (with empty values) so that the checks can run; code generation never sees it.
#pragma once
#if defined(__clang__) && __cplusplus > 201703L && !__has_builtin(__builtin_source_location)
#include <cstdint>
namespace std {
struct source_location {
  static constexpr source_location current() noexcept { return {}; }
  constexpr source_location() noexcept = default;
  constexpr std::uint_least32_t line() const noexcept { return 0; }
  constexpr std::uint_least32_t column() const noexcept { return 0; }
  constexpr const char* file_name() const noexcept { return ""; }
  constexpr const char* function_name() const noexcept { return ""; }
};
}  // namespace std
#endif
