// Reads EIATTR_KPARAM_INFO from a cubin (see cubin_params.hpp). Layout, as cuobjdump -elf shows it:
// each .nv.info.<kernel> section is a list of {u8 format, u8 attribute, value} records, where
// format 1 has no value, 2 a byte, 3 a u16, and 4 a u16 length then that many bytes. A
// KPARAM_INFO value is {u32 index, u16 ordinal, u16 offset, u32 flags}, size = flags >> 18.
#include "cubin_params.hpp"

#include <cstring>
#include <optional>
#include <string_view>

namespace opkit::cuda {
namespace {

constexpr std::uint8_t kFormatNone = 1, kFormatByte = 2, kFormatHalf = 3, kFormatSized = 4;
constexpr std::uint8_t kAttrKparamInfo = 0x17;

// Bounds-checked little-endian reads from the image.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  template <class T>
  std::optional<T> at(std::uint64_t offset) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }
  bool contains(std::uint64_t offset, std::uint64_t size) const {
    return offset <= bytes_.size() && size <= bytes_.size() - offset;
  }
  std::span<const std::uint8_t> slice(std::uint64_t offset, std::uint64_t size) const {
    return bytes_.subspan(offset, size);
  }

 private:
  std::span<const std::uint8_t> bytes_;
};

// The parameter sizes in one .nv.info.<kernel> section, or nullopt if a record is unreadable.
std::optional<std::vector<std::size_t>> kernel_params(std::span<const std::uint8_t> section) {
  std::map<std::uint16_t, std::size_t> by_ordinal;
  std::size_t p = 0;
  while (p + 2 <= section.size()) {
    const std::uint8_t format = section[p], attribute = section[p + 1];
    p += 2;
    if (format == kFormatNone) continue;
    if (format == kFormatByte) {
      p += 1;
    } else if (format == kFormatHalf) {
      p += 2;
    } else if (format == kFormatSized) {
      if (p + 2 > section.size()) return std::nullopt;
      const std::size_t size = section[p] | (std::size_t{section[p + 1]} << 8);
      p += 2;
      if (size > section.size() - p) return std::nullopt;
      if (attribute == kAttrKparamInfo) {
        if (size < 12) return std::nullopt;
        std::uint16_t ordinal;
        std::uint32_t flags;
        std::memcpy(&ordinal, section.data() + p + 4, 2);
        std::memcpy(&flags, section.data() + p + 8, 4);
        by_ordinal[ordinal] = flags >> 18;
      }
      p += size;
    } else {
      return std::nullopt;  // a format this reader does not know: the rest cannot be framed
    }
  }
  std::vector<std::size_t> sizes;
  for (const auto& [ordinal, size] : by_ordinal) {
    if (ordinal != sizes.size()) return std::nullopt;  // a gap: not a list we understand
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace

std::map<std::string, std::vector<std::size_t>> cubin_param_sizes(std::span<const std::uint8_t> image) {
  std::map<std::string, std::vector<std::size_t>> kernels;
  const Reader elf(image);
  static constexpr std::uint8_t magic[] = {0x7f, 'E', 'L', 'F', 2 /*64-bit*/, 1 /*little-endian*/};
  if (image.size() < 64 || std::memcmp(image.data(), magic, sizeof magic) != 0) return kernels;
  const auto shoff = elf.at<std::uint64_t>(0x28);
  const auto shentsize = elf.at<std::uint16_t>(0x3A), shnum = elf.at<std::uint16_t>(0x3C),
             shstrndx = elf.at<std::uint16_t>(0x3E);
  if (!shoff || !shentsize || !shnum || !shstrndx || *shentsize < 64 || *shstrndx >= *shnum) return kernels;
  struct Section {
    std::uint32_t name;
    std::uint64_t offset, size;
  };
  std::vector<Section> sections;
  for (std::uint16_t i = 0; i < *shnum; ++i) {
    const std::uint64_t header = *shoff + std::uint64_t{i} * *shentsize;
    const auto name = elf.at<std::uint32_t>(header);
    const auto file_offset = elf.at<std::uint64_t>(header + 24), size = elf.at<std::uint64_t>(header + 32);
    if (!name || !file_offset || !size || !elf.contains(*file_offset, *size)) return kernels;
    sections.push_back({*name, *file_offset, *size});
  }
  const Section& names = sections[*shstrndx];
  const auto section_name = [&](std::uint32_t at) -> std::string {
    if (at >= names.size) return {};
    const auto text = elf.slice(names.offset + at, names.size - at);
    const auto* end = static_cast<const std::uint8_t*>(std::memchr(text.data(), 0, text.size()));
    return end == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text.data()), end - text.data());
  };
  static constexpr std::string_view prefix = ".nv.info.";
  for (const Section& s : sections) {
    const std::string name = section_name(s.name);
    if (!name.starts_with(prefix) || name.size() == prefix.size()) continue;
    if (auto sizes = kernel_params(elf.slice(s.offset, s.size))) kernels[name.substr(prefix.size())] = *sizes;
  }
  return kernels;
}

}  // namespace opkit::cuda
