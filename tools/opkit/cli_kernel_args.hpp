// `opkit run --arg SPEC`: kernel arguments written on the command line. Scalars (i32:5, f32:1.5),
// zero-filled output buffers (out:f32:256), input buffers (in:u32:1,2,3 or in:u8:@FILE) and
// buffers that are both (inout:...), parsed into bytes the launch passes as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace opkit::cli {

enum class ElementType { i8, u8, i32, u32, i64, u64, f32, f64 };

std::size_t element_size(ElementType type);
const char* element_type_name(ElementType type);

struct KernelArg {
  enum class Kind { scalar, in, out, inout };
  Kind kind = Kind::scalar;
  ElementType type = ElementType::i32;
  std::vector<std::uint8_t> bytes;  // the scalar's value, or the buffer's initial contents (in, inout)
  std::size_t count = 0;            // buffer elements
  std::string spec;                 // as written, for error messages

  bool is_buffer() const { return kind != Kind::scalar; }
  bool is_output() const { return kind == Kind::out || kind == Kind::inout; }
};

// Throws Error(invalid_argument) naming the spec and what is wrong with it; Error(not_found) for
// a missing @FILE.
KernelArg parse_kernel_arg(std::string_view spec);

// Element i of a buffer of `type`, as text (shortest form that reads back the same) and as JSON.
std::string format_element(ElementType type, const std::uint8_t* element);
nlohmann::json element_json(ElementType type, const std::uint8_t* element);

}  // namespace opkit::cli
