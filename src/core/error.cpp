// opkit::Error: construction and the one-block rendering the CLI prints.
#include "opkit/error.hpp"

#include <cstdlib>
#include <sstream>
#include <string_view>

namespace opkit {

const char* errc_name(Errc code) noexcept {
  switch (code) {
    case Errc::unavailable:
      return "unavailable";
    case Errc::compile:
      return "compile error";
    case Errc::load:
      return "load error";
    case Errc::not_found:
      return "not found";
    case Errc::invalid_argument:
      return "invalid argument";
    case Errc::launch:
      return "launch error";
    case Errc::memory:
      return "memory error";
    case Errc::runtime:
      return "runtime error";
    case Errc::io:
      return "I/O error";
    case Errc::interrupted:
      return "interrupted";
  }
  return "error";
}

Error::Error(Errc kind, std::string stage, std::string message, std::source_location where)
    : kind_(kind), stage_(std::move(stage)), message_(std::move(message)), where_(where) {
  render();
}

Error&& Error::with_code(long code, std::string code_name) && {
  code_ = code;
  code_name_ = std::move(code_name);
  render();
  return std::move(*this);
}
Error&& Error::with_kernel(std::string kernel) && {
  kernel_ = std::move(kernel);
  render();
  return std::move(*this);
}
Error&& Error::with_log(std::string log) && {
  log_ = std::move(log);
  render();
  return std::move(*this);
}
Error&& Error::with_options(std::vector<std::string> options) && {
  options_ = std::move(options);
  render();
  return std::move(*this);
}
Error&& Error::with_source_name(std::string name) && {
  source_name_ = std::move(name);
  render();
  return std::move(*this);
}

const char* Error::what() const noexcept {
  return rendered_.c_str();
}

namespace {

// The source location of the throw helps whoever debugs opkit, not whoever uses it: it is shown
// only with OPKIT_VERBOSE set (to anything but 0); where() always has it.
bool show_source_location() {
  const char* flag = std::getenv("OPKIT_VERBOSE");
  return flag != nullptr && *flag != '\0' && std::string_view(flag) != "0";
}

}  // namespace

void Error::render() {
  std::ostringstream out;
  // A stage that already names the program ("opkit hash") is not prefixed a second time.
  const bool named = stage_ == "opkit" || stage_.starts_with("opkit ");
  out << (named ? "" : "opkit: ") << stage_ << ": " << message_;
  if (!code_name_.empty()) out << "\n  code:    " << code_name_ << " (" << code_ << ")";
  if (!kernel_.empty()) out << "\n  kernel:  " << kernel_;
  if (!source_name_.empty()) out << "\n  source:  " << source_name_;
  if (!options_.empty()) {
    out << "\n  options:";
    for (const auto& o : options_) out << ' ' << o;
  }
  if (show_source_location()) out << "\n  at:      " << where_.file_name() << ':' << where_.line();
  if (!log_.empty()) {
    out << "\n  log:";
    std::istringstream lines(log_);
    for (std::string line; std::getline(lines, line);) out << "\n    " << line;
  }
  rendered_ = out.str();
}

}  // namespace opkit
