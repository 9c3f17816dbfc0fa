// Hex text <-> bytes: digests, cache keys, block headers and targets, with errors that say what
// was wrong. Lower-case out, either case in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opkit {

// 2 * bytes.size() lower-case hex digits.
std::string to_hex(std::span<const std::uint8_t> bytes);
// Writes 2 * bytes.size() lower-case hex digits at out (no terminator); returns the end. For
// output loops that fill a buffer of their own (`opkit hash --lines`).
char* write_hex(std::span<const std::uint8_t> bytes, char* out);
// Exactly `bytes` bytes from 2 * bytes hex digits. `what` names the input in the
// Error(invalid_argument) thrown for a wrong length or a non-hex character.
std::vector<std::uint8_t> parse_hex(std::string_view text, std::size_t bytes, std::string_view what);
// Any even number of hex digits. The error names the position of a bad character but never the
// character itself, and nothing is decoded before the whole text is checked: keys are parsed
// with it, and a key must not leak into a message or a half-filled buffer.
std::vector<std::uint8_t> parse_hex(std::string_view text, std::string_view what);

}  // namespace opkit
