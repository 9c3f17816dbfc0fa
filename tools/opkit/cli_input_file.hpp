// Input files read in pieces or whole, "-" meaning standard input, with read errors that name
// the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace opkit::cli {

// A whole file ("-": standard input); Error(not_found) when it cannot be opened.
std::vector<std::uint8_t> read_whole_file(const std::string& path);

class InputFile {
 public:
  explicit InputFile(const std::string& path);  // "-": standard input
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  // Fills buffer unless the input ends first (or a stop is requested: cli_stop_signals.hpp);
  // returns the bytes read.
  std::size_t read_full(std::span<std::uint8_t> buffer);

 private:
  std::string path_;
  std::FILE* file_;
};

}  // namespace opkit::cli
