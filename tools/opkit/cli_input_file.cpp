// See cli_input_file.hpp.
#include "cli_input_file.hpp"

#include <cerrno>
#include <system_error>

#include "cli_stop_signals.hpp"
#include "opkit/error.hpp"

namespace opkit::cli {
namespace {

std::FILE* open_input(const std::string& path) {
  if (path == "-") return stdin;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw Error(Errc::not_found, path, "cannot open: " + std::generic_category().message(errno));
  return file;
}

}  // namespace

std::vector<std::uint8_t> read_whole_file(const std::string& path) {
  InputFile in(path);
  std::vector<std::uint8_t> data;
  std::vector<std::uint8_t> piece(std::size_t{1} << 20);
  for (;;) {
    const std::size_t n = in.read_full(piece);
    data.insert(data.end(), piece.begin(), piece.begin() + static_cast<std::ptrdiff_t>(n));
    if (n < piece.size()) break;
  }
  return data;
}

InputFile::InputFile(const std::string& path) : path_(path), file_(open_input(path)) {}

InputFile::~InputFile() {
  if (file_ != stdin) std::fclose(file_);
}

std::size_t InputFile::read_full(std::span<std::uint8_t> buffer) {
  std::size_t got = 0;
  while (got < buffer.size()) {
    got += std::fread(buffer.data() + got, 1, buffer.size() - got, file_);
    if (std::ferror(file_)) {
      if (errno != EINTR) throw Error(Errc::io, path_, "read failed: " + std::generic_category().message(errno));
      // A signal (StopSignals installs no SA_RESTART): stop at a Ctrl-C, else read on.
      std::clearerr(file_);
      if (stop_requested()) break;
    } else if (got < buffer.size()) {
      break;  // the end of the input
    }
  }
  return got;
}

}  // namespace opkit::cli
