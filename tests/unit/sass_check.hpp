// Runs one of tools/*_sass_check.py on a compiled program's cubin, for the constant-time tests
// of the cipher kernels' machine code. Needs cuobjdump ($CUOBJDUMP or PATH, with the nvdisasm it
// runs) and python3: sass_tools_missing() says which is absent, so that a test can skip.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "opkit/program.hpp"

namespace opkit::test {

inline bool on_path(const std::string& tool) {
  return std::system(("command -v '" + tool + "' >/dev/null 2>&1").c_str()) == 0;
}

inline std::string cuobjdump_tool() {
  const char* env = std::getenv("CUOBJDUMP");
  return env != nullptr && *env != '\0' ? env : "cuobjdump";
}

// "" when both tools are there, else what is missing.
inline std::string sass_tools_missing() {
  if (!on_path(cuobjdump_tool())) return "no cuobjdump to read the SASS";
  if (!on_path("python3")) return "no python3 to run the SASS check";
  return "";
}

struct SassCheck {
  int status = -1;
  std::string output;

  // tools/ct_sass_check.py's summary line of one kernel, "NAME: N instructions, M violation(s)";
  // empty when the output has none (the kernel was not checked).
  std::string summary(const std::string& kernel) const {
    const std::size_t at = output.find(kernel + ": ");
    return at == std::string::npos ? std::string() : output.substr(at, output.find('\n', at) - at);
  }
};

// tools/<script> on the cubin of `compiled`, with `arguments` after the cubin's path.
inline SassCheck run_sass_check(const std::string& script, const CompiledProgram& compiled,
                                const std::string& arguments = "") {
  const auto dir = std::filesystem::temp_directory_path() / ("opkit-sass-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto cubin = dir / "kernels.cubin";
  std::ofstream(cubin, std::ios::binary)
      .write(reinterpret_cast<const char*>(compiled.binary.data()),
             static_cast<std::streamsize>(compiled.binary.size()));
  const std::string path = std::string(OPKIT_TEST_DATA_DIR) + "/../../tools/" + script;
  const std::string command =
      "CUOBJDUMP='" + cuobjdump_tool() + "' python3 '" + path + "' '" + cubin.string() + "' " + arguments + " 2>&1";
  SassCheck result;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) result.output += buffer;
    result.status = ::pclose(pipe);
  }
  std::filesystem::remove_all(dir);
  return result;
}

}  // namespace opkit::test
