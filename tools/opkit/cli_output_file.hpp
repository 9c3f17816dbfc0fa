// An output file that appears whole or not at all: bytes go to a temporary file beside the
// destination, which commit() renames over it. A failure (full disk, Ctrl-C, an exception)
// leaves the destination as it was and removes the temporary. An existing destination that is
// not a regular file (/dev/stdout, a FIFO) is written directly, and so is "-", standard output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace opkit::cli {

class OutputFile {
 public:
  // Creates the temporary (mode 0666 less the umask, as a plain create would); throws
  // opkit::Error(io) naming the folder when it cannot.
  explicit OutputFile(std::filesystem::path destination);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Throws opkit::Error(io) naming the destination and the reason (e.g. "No space left on device").
  void write(std::span<const std::byte> bytes);
  void write(const void* data, std::size_t size) { write({static_cast<const std::byte*>(data), size}); }
  void write(std::span<const std::uint8_t> bytes) { write(bytes.data(), bytes.size()); }
  // Flushes to disk and renames into place; after it the destructor leaves the file alone.
  void commit();

  const std::filesystem::path& destination() const noexcept { return destination_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);

  std::filesystem::path destination_;
  std::string temporary_;
  int fd_ = -1;
  bool direct_ = false;  // writing into an existing non-regular file (see the constructor)
  bool stdout_ = false;  // "-": fd 1, which stays open for the command's own output
  bool committed_ = false;
};

}  // namespace opkit::cli
