// chacha20 batches with 16-byte IVs in device memory: each message's length against the block
// counter its IV starts from, checked on the device (kernels/batch_iv_check.cu), since the host
// cannot read those IVs. The one check of a batch that reads IV contents.
#pragma once

#include "cipher_checks.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"

namespace opkit::ops::detail {

// Throws, before any cipher work, the Error check_message throws on the host for the first
// message whose blocks do not fit the 32-bit counter from its IV's counter word (that IV, 16
// public bytes, is copied back to say so). Queues one kernel of a thread per message on the
// call's stream and waits for its one-word verdict: the call is no longer free of waits, and
// the wait includes the work queued on the stream before it. Batches whose messages are all at
// most one 64-byte block long skip it (any counter has room for one block).
void check_chacha20_counters_on_device(const Device& device, const CipherBatch& batch, const BatchBounds& bounds,
                                       const char* stage, const Stream* stream);

}  // namespace opkit::ops::detail
