// `opkit lz4`'s data path: one input streamed to one output through Lz4FrameWriter or
// Lz4StreamDecoder, a batch at a time, so memory stays bounded by the batch whatever the file
// size or what a hostile frame declares. The output goes through OutputFile (a temporary renamed
// into place on success; an error or Ctrl-C leaves no partial file). Under a StopSignals, Ctrl-C /
// SIGTERM stop it between batches; on a terminal a progress line shows the bytes so far.
#pragma once

#include <cstdint>
#include <string>

#include "opkit/ops/lz4.hpp"

namespace opkit::cli {

struct Lz4Job {
  std::string input;   // "-": stdin
  std::string output;  // "-": stdout; empty: write nothing (-t)
  std::size_t batch_bytes = ops::lz4_stream_batch_bytes;
  bool progress = false;  // the progress line on stderr
};

struct Lz4Totals {
  std::uint64_t in = 0, out = 0;
  bool interrupted = false;  // stopped by a signal: nothing was committed
};

// Compresses into one frame. options.content_size applies only when the input's size is known up
// front (a regular file); for stdin and pipes the header has none, as with the lz4 tool.
Lz4Totals lz4_compress_stream(const Lz4Job& job, ops::Lz4CompressOptions options);
Lz4Totals lz4_decompress_stream(const Lz4Job& job, const ops::Lz4DecompressOptions& options);

}  // namespace opkit::cli
