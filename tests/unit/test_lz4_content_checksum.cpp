// Content checksums of device bytes (lz4/content_checksum.hpp) on the CPU backend, against
// libxxhash on the same bytes: every length around the 8 MiB chunk, a batch of items, and a
// computation abandoned before its result is taken (it stops and is waited for, never left
// running).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <random>
#include <vector>

#include "lz4/content_checksum.hpp"
#include "lz4/device_lz4.hpp"
#include "unit/lz4_test_data.hpp"

namespace {

namespace lz4 = opkit::ops::lz4;
using opkit::test::Bytes;

std::uint32_t reference(const Bytes& data) {
  return static_cast<std::uint32_t>(XXH32(data.data(), data.size(), 0));
}

TEST(Lz4ContentChecksum, EveryLengthAroundTheChunkMatchesXxh32) {
  const opkit::Device cpu = opkit::Device::cpu();
  const std::size_t chunk = lz4::content_checksum_chunk_bytes;
  const std::uint32_t seed = std::random_device()();
  for (std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{4095}, chunk - 1, chunk, chunk + 1, 2 * chunk, 3 * chunk - 7}) {
    const Bytes data = opkit::test::random_bytes(n, seed + static_cast<std::uint32_t>(n));
    const auto buffer = lz4::upload(cpu, std::span<const std::uint8_t>(data));
    EXPECT_EQ(lz4::device_content_checksum(buffer.view().subview(0, n)), reference(data))
        << n << " bytes, seed " << seed;
  }
}

TEST(Lz4ContentChecksum, ABatchGivesOneChecksumPerItemInOrder) {
  const opkit::Device cpu = opkit::Device::cpu();
  std::vector<Bytes> data;
  std::vector<opkit::DeviceBuffer<std::uint8_t>> buffers;
  std::vector<opkit::BufferView<const std::uint8_t>> items;
  for (std::size_t n : {std::size_t{100}, lz4::content_checksum_chunk_bytes + 3, std::size_t{0}, std::size_t{77}}) {
    data.push_back(opkit::test::text_bytes(n, static_cast<std::uint32_t>(n)));
    buffers.push_back(lz4::upload(cpu, std::span<const std::uint8_t>(data.back())));
    items.emplace_back(buffers.back().view().subview(0, n));
  }
  lz4::ContentChecksums sums(items);
  const std::vector<std::uint32_t> got = sums.get();
  ASSERT_EQ(got.size(), data.size());
  for (std::size_t i = 0; i < data.size(); ++i) EXPECT_EQ(got[i], reference(data[i])) << "item " << i;
}

TEST(Lz4ContentChecksum, AbandonedBeforeItsResultItStopsAndIsWaitedFor) {
  const opkit::Device cpu = opkit::Device::cpu();
  const Bytes data = opkit::test::random_bytes(8 * lz4::content_checksum_chunk_bytes, 5);
  const auto buffer = lz4::upload(cpu, std::span<const std::uint8_t>(data));
  const std::vector<opkit::BufferView<const std::uint8_t>> items(4, buffer.view());
  for (int i = 0; i < 3; ++i) {
    lz4::ContentChecksums abandoned(items);  // destroyed at once: as when compression throws
  }
  lz4::ContentChecksums kept(items);
  for (std::uint32_t sum : kept.get()) EXPECT_EQ(sum, reference(data));
}

}  // namespace
