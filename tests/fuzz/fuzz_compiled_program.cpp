// libFuzzer target: the kernel cache's entry format (CompiledProgram::deserialize). Damaged bytes
// are refused; bytes that are accepted serialize back to themselves exactly.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "opkit/program.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  opkit::CompiledProgram program;
  if (opkit::CompiledProgram::deserialize(bytes, program) && program.serialize() != bytes) std::abort();
  return 0;
}
