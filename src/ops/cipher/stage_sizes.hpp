// How a cipher batch streams its host keys, IVs and AAD to the device (batch_inputs.hpp): a batch
// of more than chunk_messages messages goes in chunks of that many, through a pinned staging ring
// of these sizes. Process-wide; tests make them small, so that a few messages take several chunks
// and the ring wraps within a call.
#pragma once

#include <cstddef>

#include "pinned_ring.hpp"

namespace opkit::ops::detail {

struct StageSizes {
  // 2^16 messages: a launch of the ChaCha20 batch kernel that fills an H100 several times over
  // (2^19 threads at 1500 bytes a message), and 3 MiB of ChaCha20 keys and IVs, whose upload is
  // all of the call's that the kernels do not overlap.
  std::size_t chunk_messages = std::size_t{1} << 16;
  PinnedRingSizes ring;
};

StageSizes stage_sizes();
void set_stage_sizes(const StageSizes& sizes);

}  // namespace opkit::ops::detail
