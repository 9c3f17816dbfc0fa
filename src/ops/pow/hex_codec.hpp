// Hex text <-> bytes for headers, targets and digests, with errors that say what was wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opkit::ops::detail {

// Exactly `bytes` bytes from 2 * bytes hex digits (either case). `what` names the input in the
// Error(invalid_argument) thrown for a wrong length or a non-hex character.
std::vector<std::uint8_t> parse_hex(std::string_view text, std::size_t bytes, std::string_view what);
std::string to_hex(const std::uint8_t* data, std::size_t size);

}  // namespace opkit::ops::detail
