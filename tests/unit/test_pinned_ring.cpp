// The pinned staging ring of the cipher batches' host keys (src/ops/cipher/pinned_ring.hpp), on a
// test device whose copies on a stream run only when something waits for them, as a GPU's DMA
// reads pinned memory when the copy runs, not when it is queued: what arrives is what was copied
// (a slot refilled before its copy ran would send the new bytes), pieces span slots and the ring
// wraps, a mark is an event behind the copies before it, every staging byte the ring used is zero
// after finish() and after the destructor, and the staging memory is kept for the next ring. And
// the way back (download_through_pinned): device bytes of any size arrive whole, after the
// stream's earlier work, and the pinned memory holds nothing once the call returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "opkit/backend.hpp"
#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"
#include "ops/cipher/pinned_ring.hpp"
#include "unit/cipher_test_support.hpp"
#include "unit/deferred_copies.hpp"

namespace {

using cipher_test::Bytes;
using cipher_test::random_below;
using cipher_test::random_bytes;
using opkit::ops::detail::PinnedRing;
using opkit::ops::detail::PinnedRingSizes;

using opkit_test::Deferred;

bool all_zero(std::span<const std::uint8_t> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

// Random nonzero bytes (so that a wipe shows).
Bytes nonzero_bytes(std::size_t n) {
  Bytes bytes = random_bytes(n);
  for (std::uint8_t& b : bytes) b |= 1;
  return bytes;
}

TEST(PinnedRing, PiecesOfAnySizeArriveWholeThroughSlotsThatWrapAround) {
  for (const PinnedRingSizes sizes :
       {PinnedRingSizes{.slot_bytes = 1, .slots = 1}, PinnedRingSizes{.slot_bytes = 7, .slots = 3},
        PinnedRingSizes{.slot_bytes = 64, .slots = 2}}) {
    Deferred d;
    const Bytes source = nonzero_bytes(5000);
    Bytes target(source.size(), 0);
    {
      PinnedRing ring(d.device, sizes);
      for (std::size_t at = 0; at < source.size();) {
        const std::size_t n = std::min<std::size_t>(random_below(90), source.size() - at);
        Bytes piece(source.begin() + static_cast<std::ptrdiff_t>(at),
                    source.begin() + static_cast<std::ptrdiff_t>(at + n));
        ring.copy(piece, target.data() + at);
        std::fill(piece.begin(), piece.end(), 0);  // the caller's memory is free once copy() returns
        if (random_below(4) == 0) (void)ring.mark();
        at += n;
      }
      ring.finish();
    }
    EXPECT_EQ(target, source) << "slots of " << sizes.slot_bytes << " bytes, " << sizes.slots << " of them";
  }
}

TEST(PinnedRing, AMarkIsAnEventBehindEveryCopyBeforeIt) {
  Deferred d;
  const Bytes first = nonzero_bytes(100), second = nonzero_bytes(100);
  Bytes target(200, 0);
  PinnedRing ring(d.device, {.slot_bytes = 32, .slots = 8});
  ring.copy(first, target.data());
  const opkit::Event& mark = ring.mark();
  EXPECT_TRUE(all_zero(target)) << "the copies ran before anything waited for them: the test device defers nothing";
  mark.synchronize();
  EXPECT_EQ(Bytes(target.begin(), target.begin() + 100), first);
  ring.copy(second, target.data() + 100);
  ring.mark().synchronize();
  EXPECT_EQ(Bytes(target.begin() + 100, target.end()), second);
}

TEST(PinnedRing, FinishWaitsForTheCopiesAndWipesEveryStagingByte) {
  Deferred d;
  const Bytes secret = nonzero_bytes(300);
  Bytes target(secret.size(), 0);
  PinnedRing ring(d.device, {.slot_bytes = 64, .slots = 3});
  ring.copy(secret, target.data());
  ASSERT_FALSE(all_zero(d.impl->pinned)) << "the ring staged nothing";
  ring.finish();
  EXPECT_EQ(target, secret);
  EXPECT_TRUE(all_zero(d.impl->pinned)) << "key bytes left in pinned staging after finish()";
}

TEST(PinnedRing, TheDestructorWipesWhatFinishWasNotCalledFor) {
  Deferred d;
  const Bytes secret = nonzero_bytes(100);
  Bytes target(secret.size(), 0);
  {
    PinnedRing ring(d.device, {.slot_bytes = 64, .slots = 4});
    ring.copy(secret, target.data());
  }
  EXPECT_EQ(target, secret);
  EXPECT_TRUE(all_zero(d.impl->pinned)) << "key bytes left in pinned staging after the ring went";
}

TEST(PinnedRing, TheNextRingReusesTheStagingMemory) {
  Deferred d;
  Bytes target(64, 0);
  for (int i = 0; i < 3; ++i) {
    PinnedRing ring(d.device, {.slot_bytes = 16, .slots = 4});
    ring.copy(nonzero_bytes(64), target.data());
  }
  EXPECT_EQ(d.impl->pinned_allocations, 1);
}

TEST(PinnedRing, DownloadsArriveWholeAfterTheStreamsWorkAndLeaveNothingPinned) {
  Deferred d;
  const opkit::Stream stream = d.device.create_stream();
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, std::size_t{700000} + random_below(1000)}) {
    const Bytes want = nonzero_bytes(n);
    Bytes device_bytes(n, 0);
    // Written on the stream, not yet run: the download must wait for it.
    opkit::BufferView<std::uint8_t>(d.device, device_bytes.data(), n).copy_from(want, &stream);
    Bytes got(n, 0);
    opkit::ops::detail::download_through_pinned(opkit::BufferView<const std::uint8_t>(d.device, device_bytes.data(), n),
                                                got, stream);
    EXPECT_EQ(got, want) << n << " bytes";
    EXPECT_TRUE(all_zero(d.impl->pinned)) << "bytes left in pinned memory after a download of " << n;
  }
}

}  // namespace
