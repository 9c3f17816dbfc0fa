// The host bytes a cipher call parks for its queued copies (src/ops/cipher/host_bytes_in_flight.hpp),
// on a test device whose copies read their source only when something waits for them: what
// arrives is what the caller gave when the copy was queued, whatever the caller does with its
// memory afterwards, over several streams passed in any order, and a release in between (which
// must keep what has not been copied yet) changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "opkit/buffer.hpp"
#include "opkit/stream.hpp"
#include "ops/cipher/host_bytes_in_flight.hpp"
#include "unit/cipher_test_support.hpp"
#include "unit/deferred_copies.hpp"

namespace {

using cipher_test::Bytes;
using cipher_test::random_bytes;
using opkit_test::Deferred;

TEST(HostBytesInFlight, QueuedCopiesSendTheBytesAsGivenWhateverTheCallerDoesNext) {
  Deferred d;
  std::vector<opkit::Stream> streams;
  for (int i = 0; i < 3; ++i) streams.push_back(d.device.create_stream());
  std::vector<Bytes> sent;
  std::vector<opkit::DeviceBuffer<std::uint8_t>> targets;
  Bytes caller;  // one buffer the caller reuses for every call, as a call's own table would be
  for (std::size_t k = 0; k < 6; ++k) {
    caller = random_bytes(100 + 37 * k);
    sent.push_back(caller);
    targets.push_back(d.device.alloc<std::uint8_t>(caller.size()));
    opkit::ops::detail::upload_in_flight(targets.back().view(), std::span<const std::uint8_t>(caller), d.device,
                                         streams[k % streams.size()]);
    std::fill(caller.begin(), caller.end(), std::uint8_t{0xEE});  // reused before any copy ran
    opkit::ops::detail::release_copied();                         // nothing has been copied yet
  }
  for (auto it = streams.rbegin(); it != streams.rend(); ++it) it->synchronize();
  for (std::size_t k = 0; k < sent.size(); ++k) EXPECT_EQ(targets[k].to_host(), sent[k]) << "upload " << k;
  opkit::ops::detail::release_copied();
}

}  // namespace
