// Parsing and printing of `opkit run` argument specs. Values are range-checked against their
// type, so `u8:300` or `i32:1.5` is an error instead of a silently different number.
#include "cli_kernel_args.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <system_error>
#include <type_traits>

#include "opkit/error.hpp"

namespace opkit::cli {
namespace {

constexpr const char* kForms =
    "write a scalar as TYPE:VALUE (i32:5, u32:5, i64:-3, u64:7, f32:1.5, f64:2.5), an output buffer as "
    "out:TYPE:COUNT, an input buffer as in:TYPE:v1,v2,... or in:TYPE:@FILE, a buffer that is both as inout:...; "
    "buffer TYPE is one of i8 u8 i32 u32 i64 u64 f32 f64";

// Messages are built with append: GCC 12's -Wrestrict misfires on chains of string operator+.
[[noreturn]] void bad(std::string_view spec, std::initializer_list<std::string_view> why) {
  std::string message = "'";
  message.append(spec).append("': ");
  for (std::string_view part : why) message.append(part);
  message.append("; ").append(kForms);
  throw Error(Errc::invalid_argument, "--arg", message);
}

bool parse_type(std::string_view text, ElementType& type) {
  static constexpr std::pair<std::string_view, ElementType> kTypes[] = {
      {"i8", ElementType::i8},   {"u8", ElementType::u8},   {"i32", ElementType::i32}, {"u32", ElementType::u32},
      {"i64", ElementType::i64}, {"u64", ElementType::u64}, {"f32", ElementType::f32}, {"f64", ElementType::f64}};
  for (const auto& [name, value] : kTypes)
    if (text == name) {
      type = value;
      return true;
    }
  return false;
}

template <class T>
bool parse_number(std::string_view text, T& value) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if constexpr (std::is_integral_v<T>) {
    int base = 10;
    bool negative = !text.empty() && text[0] == '-';
    std::string_view digits = negative ? text.substr(1) : text;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
      base = 16;
      if (negative) return false;  // hex is for bit patterns; write negative numbers in decimal
      first += 2;
    }
    if (first < last && *first == '+') return false;
    auto [end, ec] = std::from_chars(first, last, value, base);
    return ec == std::errc() && end == last;
  } else {
    if (first < last && *first == '+') ++first;
    auto [end, ec] = std::from_chars(first, last, value);
    return ec == std::errc() && end == last && first != last;
  }
}

template <class T>
void append_value(std::vector<std::uint8_t>& out, std::string_view spec, std::string_view text, const char* type) {
  T value{};
  if (!parse_number(text, value))
    bad(spec,
        {"'", text, "' is not ", std::is_integral_v<T> ? "an integer that fits type " : "a number of type ", type});
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

void append_parsed(std::vector<std::uint8_t>& out, std::string_view spec, ElementType type, std::string_view text) {
  const char* name = element_type_name(type);
  switch (type) {
    case ElementType::i8:
      return append_value<std::int8_t>(out, spec, text, name);
    case ElementType::u8:
      return append_value<std::uint8_t>(out, spec, text, name);
    case ElementType::i32:
      return append_value<std::int32_t>(out, spec, text, name);
    case ElementType::u32:
      return append_value<std::uint32_t>(out, spec, text, name);
    case ElementType::i64:
      return append_value<std::int64_t>(out, spec, text, name);
    case ElementType::u64:
      return append_value<std::uint64_t>(out, spec, text, name);
    case ElementType::f32:
      return append_value<float>(out, spec, text, name);
    case ElementType::f64:
      return append_value<double>(out, spec, text, name);
  }
}

std::vector<std::uint8_t> read_file(std::string_view spec, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(Errc::not_found, "--arg",
                "'" + std::string(spec) + "': cannot open " + path + ": " + std::generic_category().message(errno));
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <class T>
T load(const std::uint8_t* element) {
  T value;
  std::memcpy(&value, element, sizeof value);
  return value;
}

}  // namespace

std::size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::i8:
    case ElementType::u8:
      return 1;
    case ElementType::i32:
    case ElementType::u32:
    case ElementType::f32:
      return 4;
    case ElementType::i64:
    case ElementType::u64:
    case ElementType::f64:
      return 8;
  }
  return 1;
}

const char* element_type_name(ElementType type) {
  switch (type) {
    case ElementType::i8:
      return "i8";
    case ElementType::u8:
      return "u8";
    case ElementType::i32:
      return "i32";
    case ElementType::u32:
      return "u32";
    case ElementType::i64:
      return "i64";
    case ElementType::u64:
      return "u64";
    case ElementType::f32:
      return "f32";
    case ElementType::f64:
      return "f64";
  }
  return "?";
}

KernelArg parse_kernel_arg(std::string_view spec) {
  KernelArg arg;
  arg.spec = spec;
  auto colon = spec.find(':');
  if (colon == std::string_view::npos) bad(spec, {"no ':'"});
  std::string_view head = spec.substr(0, colon), rest = spec.substr(colon + 1);

  if (head == "out" || head == "in" || head == "inout") {
    arg.kind = head == "out" ? KernelArg::Kind::out : head == "in" ? KernelArg::Kind::in : KernelArg::Kind::inout;
    auto second = rest.find(':');
    if (second == std::string_view::npos) bad(spec, {"a buffer needs TYPE:", head == "out" ? "COUNT" : "VALUES"});
    if (!parse_type(rest.substr(0, second), arg.type))
      bad(spec, {"'", rest.substr(0, second), "' is not a buffer element type"});
    std::string_view body = rest.substr(second + 1);
    const std::size_t size = element_size(arg.type);
    if (arg.kind == KernelArg::Kind::out) {
      if (!parse_number(body, arg.count) || arg.count == 0) bad(spec, {"the element count must be a positive integer"});
      if (arg.count > (std::size_t{1} << 40) / size) bad(spec, {"the buffer would be larger than 1 TiB"});
      return arg;
    }
    if (!body.empty() && body[0] == '@') {
      arg.bytes = read_file(spec, std::string(body.substr(1)));
      if (arg.bytes.empty()) bad(spec, {"the file ", body.substr(1), " is empty"});
      if (arg.bytes.size() % size != 0) {
        std::string bytes = std::to_string(arg.bytes.size());
        bad(spec,
            {"the file's ", bytes, " bytes are not a whole number of ", element_type_name(arg.type), " elements"});
      }
    } else {
      if (body.empty()) bad(spec, {"an input buffer needs at least one value"});
      for (std::size_t start = 0;;) {
        auto comma = body.find(',', start);
        append_parsed(arg.bytes, spec, arg.type, body.substr(start, comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    }
    arg.count = arg.bytes.size() / size;
    return arg;
  }

  if (!parse_type(head, arg.type) || element_size(arg.type) == 1)
    bad(spec, {"'", head, "' is neither a scalar type (i32 u32 i64 u64 f32 f64) nor in, out or inout"});
  if (rest.find(':') != std::string_view::npos || rest.find(',') != std::string_view::npos)
    bad(spec, {"a scalar holds one value"});
  append_parsed(arg.bytes, spec, arg.type, rest);
  return arg;
}

std::string format_element(ElementType type, const std::uint8_t* element) {
  char text[64];
  std::to_chars_result r{};
  switch (type) {
    case ElementType::i8:
      r = std::to_chars(text, text + sizeof text, int{load<std::int8_t>(element)});
      break;
    case ElementType::u8:
      r = std::to_chars(text, text + sizeof text, unsigned{load<std::uint8_t>(element)});
      break;
    case ElementType::i32:
      r = std::to_chars(text, text + sizeof text, load<std::int32_t>(element));
      break;
    case ElementType::u32:
      r = std::to_chars(text, text + sizeof text, load<std::uint32_t>(element));
      break;
    case ElementType::i64:
      r = std::to_chars(text, text + sizeof text, load<std::int64_t>(element));
      break;
    case ElementType::u64:
      r = std::to_chars(text, text + sizeof text, load<std::uint64_t>(element));
      break;
    case ElementType::f32:
      r = std::to_chars(text, text + sizeof text, load<float>(element));
      break;
    case ElementType::f64:
      r = std::to_chars(text, text + sizeof text, load<double>(element));
      break;
  }
  return std::string(text, r.ptr);
}

nlohmann::json element_json(ElementType type, const std::uint8_t* element) {
  switch (type) {
    case ElementType::i8:
      return load<std::int8_t>(element);
    case ElementType::u8:
      return load<std::uint8_t>(element);
    case ElementType::i32:
      return load<std::int32_t>(element);
    case ElementType::u32:
      return load<std::uint32_t>(element);
    case ElementType::i64:
      return load<std::int64_t>(element);
    case ElementType::u64:
      return load<std::uint64_t>(element);
    case ElementType::f32: {
      // Through the float's shortest text, so 0.1f prints as 0.1 rather than 0.10000000149011612.
      double value = 0;
      std::string text = format_element(type, element);
      std::from_chars(text.data(), text.data() + text.size(), value);
      return value;
    }
    case ElementType::f64:
      return load<double>(element);
  }
  return nullptr;
}

}  // namespace opkit::cli
