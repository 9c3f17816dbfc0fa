// SideStream (src/ops/cipher/side_stream.hpp) on the cpu-deferred test backend, whose streams run
// in random eager and lazy phases, as a GPU's may: work queued on the side stream reads what the
// caller's stream wrote before the fork, and the caller's stream reads, after the join, what the
// side stream wrote. Many rounds, each on fresh streams and a kept side stream: a missing fork or
// join shows in most of them.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "cpu_deferred.hpp"
#include "opkit/buffer.hpp"
#include "opkit/device.hpp"
#include "opkit/stream.hpp"
#include "ops/cipher/side_stream.hpp"

namespace {

TEST(SideStream, ForksFromTheCallersStreamAndJoinsItBack) {
  opkit::test::register_cpu_deferred_backend();
  const opkit::Device device = opkit::Device::parse("cpu-deferred:0");
  for (std::uint32_t round = 1; round <= 64; ++round) {
    const opkit::Stream caller = device.create_stream();
    auto words = device.alloc<std::uint32_t>(3);
    words.fill(0);
    words.view().subview(0, 1).fill(round, &caller);  // on the caller's stream, before the fork
    {
      const opkit::ops::detail::SideStream side(device, &caller);
      words.view().subview(1, 1).copy_from(std::as_const(words).view().subview(0, 1), &side.stream());
    }  // joined
    words.view().subview(2, 1).copy_from(std::as_const(words).view().subview(1, 1), &caller);
    std::vector<std::uint32_t> host(3);
    words.copy_to(host, &caller);  // pageable: returns once the caller's stream has reached it
    EXPECT_EQ(host, (std::vector<std::uint32_t>{round, round, round})) << "round " << round;
  }
}

}  // namespace
