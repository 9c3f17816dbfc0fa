// opkit::Error: the one exception type of the library. It carries everything a user needs to fix
// the problem (the stage that failed, the CUDA/NVRTC code, the kernel, the compile log, the
// options) so that callers never have to dig through stderr.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>
#include <vector>

namespace opkit {

// What kind of failure this is; the CLI maps these to exit codes and tests assert on them.
enum class Errc {
  unavailable,       // a backend or library is missing (no driver, no NVRTC, no compiler)
  compile,           // kernel source failed to compile; log() holds the compiler's log
  load,              // a compiled binary failed to load into a module
  not_found,         // unknown kernel name, missing file
  invalid_argument,  // caller passed something impossible (wrong size, bad hex, ...)
  launch,            // a launch was rejected or the kernel faulted while running
  memory,            // allocation or copy failed (out of memory, bad pointer)
  runtime,           // any other failure reported by a backend
  io,                // file system trouble (cache, input files)
  interrupted,       // the user asked to stop (Ctrl-C)
};

const char* errc_name(Errc code) noexcept;

class Error : public std::exception {
 public:
  Error(Errc kind, std::string stage, std::string message,
        std::source_location where = std::source_location::current());

  // Builder-style setters used at the throw site: throw Error(...).with_kernel(name).with_log(log);
  Error&& with_code(long code, std::string code_name) &&;
  Error&& with_kernel(std::string kernel) &&;
  Error&& with_log(std::string log) &&;
  Error&& with_options(std::vector<std::string> options) &&;
  Error&& with_source_name(std::string name) &&;

  Errc kind() const noexcept { return kind_; }
  const std::string& stage() const noexcept { return stage_; }          // e.g. "nvrtcCompileProgram"
  const std::string& message() const noexcept { return message_; }      // one line, no context
  long code() const noexcept { return code_; }                          // backend's numeric code, 0 if none
  const std::string& code_name() const noexcept { return code_name_; }  // e.g. CUDA_ERROR_ILLEGAL_ADDRESS
  const std::string& kernel() const noexcept { return kernel_; }
  const std::string& log() const noexcept { return log_; }
  const std::vector<std::string>& options() const noexcept { return options_; }
  const std::string& source_name() const noexcept { return source_name_; }
  const std::source_location& where() const noexcept { return where_; }

  // The whole story as one readable block: first line "opkit: <stage>: <message>", then one
  // indented line per piece of context, then the compile log.
  const char* what() const noexcept override;

 private:
  void render();

  Errc kind_;
  std::string stage_, message_;
  long code_ = 0;
  std::string code_name_, kernel_, log_, source_name_;
  std::vector<std::string> options_;
  std::source_location where_;
  std::string rendered_;
};

}  // namespace opkit
