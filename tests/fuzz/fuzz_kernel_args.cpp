// libFuzzer target: `opkit run --arg SPEC` (tools/opkit/cli_kernel_args). A spec either throws
// opkit::Error or gives a value of its type's size / a buffer whose bytes fit its element count.
// Specs naming a file (@FILE) are skipped: the fuzzer must not read the machine's files.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cli_kernel_args.hpp"
#include "opkit/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  if (spec.find('@') != std::string_view::npos) return 0;
  try {
    const opkit::cli::KernelArg arg = opkit::cli::parse_kernel_arg(spec);
    const std::size_t element = opkit::cli::element_size(arg.type);
    if (arg.kind == opkit::cli::KernelArg::Kind::scalar) {
      if (arg.bytes.empty() || arg.bytes.size() > 8) std::abort();
    } else if (arg.count == 0 || (!arg.bytes.empty() && arg.bytes.size() != arg.count * element)) {
      std::abort();
    }
    for (std::size_t i = 0; i + element <= arg.bytes.size(); i += element)
      (void)opkit::cli::format_element(arg.type, arg.bytes.data() + i);
  } catch (const opkit::Error&) {
  }
  return 0;
}
