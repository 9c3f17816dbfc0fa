// The SHA-256 operators on a CUDA GPU against OpenSSL, on fresh random messages: host data
// (chunked through the device) and device buffers, fixed and variable length, sha256 and sha256d.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "gpu/gpu_test.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/sha256.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

using opkit::ops::HashAlgo;
using opkit::ops::HashOptions;
using namespace opkit::test;

std::mt19937_64 fresh_rng() {
  std::random_device device;
  return std::mt19937_64((std::uint64_t{device()} << 32) | device());
}

void hash_host(HashAlgo algo, std::span<const std::uint8_t> data, std::size_t len, std::span<std::uint8_t> out,
               const HashOptions& options) {
  if (algo == HashAlgo::sha256)
    opkit::ops::sha256(data, len, out, options);
  else
    opkit::ops::sha256d(data, len, out, options);
}

template <class T>
opkit::DeviceBuffer<T> upload(const opkit::Device& device, const std::vector<T>& host) {
  auto buffer = device.alloc<T>(std::max<std::size_t>(host.size(), 1));
  if (!host.empty()) buffer.view().subview(0, host.size()).copy_from(std::span<const T>(host));
  return buffer;
}

// Every length 0..300 runs through the variable-length kernel below; the fixed-length kernel is
// compiled once per length, so it is checked on every padding shape rather than every length:
// around each word boundary of the one-block / two-tail-block / whole-block cases.
TEST(Sha256Gpu, FixedBatchesOfEveryPaddingShapeMatchOpenSsl) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto rng = fresh_rng();
  const HashOptions on_gpu{.device = gpu};
  for (HashAlgo algo : {HashAlgo::sha256, HashAlgo::sha256d})
    for (std::size_t len : {0,  1,  2,  3,   4,   5,   7,   8,   31,  32,  33,  54,  55,  56,  57,  60,  63,
                            64, 65, 80, 100, 118, 119, 120, 121, 127, 128, 129, 191, 192, 200, 255, 256, 300}) {
      if (algo == HashAlgo::sha256d && len % 8 != 0) continue;
      const std::size_t count = 1 + rng() % 700;
      auto data = random_bytes(rng, len * count);
      std::vector<std::uint8_t> digests(count * 32);
      hash_host(algo, data, len, digests, on_gpu);
      ASSERT_EQ(first_mismatch(digests, fixed_messages(data, len, count), algo), "")
          << opkit::ops::hash_algo_name(algo) << " length " << len;
    }
}

TEST(Sha256Gpu, VariableBatchOfLengths0To300WithUnalignedOffsetsMatchesOpenSsl) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto rng = fresh_rng();
  std::vector<std::size_t> lengths;
  for (int copy = 0; copy < 20; ++copy)
    for (std::size_t len = 0; len <= 300; ++len) lengths.push_back(len);
  for (int i = 0; i < 300; ++i) lengths.push_back(rng() % 5000);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  auto batch = make_variable_batch(rng, lengths);
  for (HashAlgo algo : {HashAlgo::sha256, HashAlgo::sha256d}) {
    std::vector<std::uint8_t> digests(lengths.size() * 32);
    if (algo == HashAlgo::sha256)
      opkit::ops::sha256(batch.data, batch.offsets, digests, {.device = gpu});
    else
      opkit::ops::sha256d(batch.data, batch.offsets, digests, {.device = gpu});
    ASSERT_EQ(first_mismatch(digests, variable_messages(batch), algo), "") << opkit::ops::hash_algo_name(algo);
  }
}

TEST(Sha256Gpu, LongMessagesUpToOneMebibyteMatchOpenSsl) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto rng = fresh_rng();
  for (std::size_t len : {std::size_t{1000}, std::size_t{65536 + 7}, std::size_t{1} << 20}) {
    const std::size_t count = 3;
    auto data = random_bytes(rng, len * count);
    std::vector<std::uint8_t> digests(count * 32);
    opkit::ops::sha256(data, len, digests, {.device = gpu});
    EXPECT_EQ(first_mismatch(digests, fixed_messages(data, len, count), HashAlgo::sha256), "") << len;
    // The same messages as a variable-length batch.
    std::vector<std::uint64_t> offsets{0, len, 2 * len, 3 * len};
    std::fill(digests.begin(), digests.end(), 0);
    opkit::ops::sha256(data, offsets, digests, {.device = gpu});
    EXPECT_EQ(first_mismatch(digests, fixed_messages(data, len, count), HashAlgo::sha256), "") << len;
  }
}

TEST(Sha256Gpu, HostBatchesThroughManySmallChunksMatchOpenSsl) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto rng = fresh_rng();
  // 4 KiB chunks: dozens of chunks through the two-slot pipeline, and messages (up to 20 KB)
  // larger than a chunk, which get a buffer of their own.
  const HashOptions small_chunks{.device = gpu, .chunk_bytes = 4096};
  for (std::size_t len : {std::size_t{0}, std::size_t{32}, std::size_t{1000}, std::size_t{20000}}) {
    const std::size_t count = 5000 + rng() % 100;
    auto data = random_bytes(rng, len * count);
    std::vector<std::uint8_t> digests(count * 32);
    opkit::ops::sha256(data, len, digests, small_chunks);
    ASSERT_EQ(first_mismatch(digests, fixed_messages(data, len, count), HashAlgo::sha256), "") << len;
  }
  std::vector<std::size_t> lengths;
  for (int i = 0; i < 3000; ++i) lengths.push_back(i % 100 == 0 ? 9000 + rng() % 9000 : rng() % 300);
  auto batch = make_variable_batch(rng, lengths);
  std::vector<std::uint8_t> digests(lengths.size() * 32);
  opkit::ops::sha256d(batch.data, batch.offsets, digests, small_chunks);
  EXPECT_EQ(first_mismatch(digests, variable_messages(batch), HashAlgo::sha256d), "");
}

TEST(Sha256Gpu, EmptyBatchAndBatchOfOne) {
  OPKIT_SKIP_WITHOUT_GPU();
  std::vector<std::uint8_t> none;
  opkit::ops::sha256(std::span<const std::uint8_t>(), 32, std::span<std::uint8_t>(none), {.device = gpu});
  auto rng = fresh_rng();
  auto data = random_bytes(rng, 32);
  std::vector<std::uint8_t> digest(32);
  opkit::ops::sha256d(data, 32, digest, {.device = gpu});
  EXPECT_EQ(first_mismatch(digest, fixed_messages(data, 32, 1), HashAlgo::sha256d), "");
}

TEST(Sha256Gpu, DeviceBuffersInAndOutAtUnalignedAddressesMatchOpenSsl) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto rng = fresh_rng();
  for (std::size_t shift : {0, 1, 4, 8}) {
    for (std::size_t len : {32, 64, 80, 1024}) {
      const std::size_t count = 1000 + rng() % 1000;
      auto data = random_bytes(rng, len * count + shift);
      auto in = upload(gpu, data);
      auto out = gpu.alloc<std::uint8_t>(count * 32 + shift);
      auto in_view = opkit::BufferView<const std::uint8_t>(in.view()).subview(shift, len * count);
      auto out_view = out.view().subview(shift, count * 32);
      opkit::ops::sha256(in_view, len, out_view);
      auto digests = out_view.to_host();
      ASSERT_EQ(first_mismatch(digests, fixed_messages(std::span<const std::uint8_t>(data).subspan(shift), len, count),
                               HashAlgo::sha256),
                "")
          << "shift " << shift << " length " << len;
    }
  }
}

TEST(Sha256Gpu, DeviceVariableBatchOnAStreamMatchesOpenSsl) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto rng = fresh_rng();
  std::vector<std::size_t> lengths;
  for (int i = 0; i < 5000; ++i) lengths.push_back(rng() % 300);
  auto batch = make_variable_batch(rng, lengths);
  auto data = upload(gpu, batch.data);
  auto offsets = upload(gpu, batch.offsets);
  auto out = gpu.alloc<std::uint8_t>(lengths.size() * 32);
  opkit::Stream stream = gpu.create_stream();
  opkit::ops::sha256d(opkit::BufferView<const std::uint8_t>(data.view()).subview(0, batch.data.size()),
                      opkit::BufferView<const std::uint64_t>(offsets.view()), out, {.stream = &stream});
  EXPECT_EQ(first_mismatch(out.to_host(), variable_messages(batch), HashAlgo::sha256d), "");
}

TEST(Sha256Gpu, BadOffsetsInDeviceMemoryAreReportedByMessageIndex) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto data = upload(gpu, std::vector<std::uint8_t>(100, 7));
  auto offsets = upload(gpu, std::vector<std::uint64_t>{0, 10, 20, 200});
  auto out = gpu.alloc<std::uint8_t>(3 * 32);
  try {
    opkit::ops::sha256(opkit::BufferView<const std::uint8_t>(data.view()),
                       opkit::BufferView<const std::uint64_t>(offsets.view()), out);
    FAIL() << "offsets past the end were accepted";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
    EXPECT_NE(e.message().find("message 2"), std::string::npos) << e.message();
  }
}

TEST(Sha256Gpu, KernelWithSeveralMessagesPerThreadMatchesOpenSsl) {
  OPKIT_SKIP_WITHOUT_GPU();
  auto rng = fresh_rng();
  opkit::ops::Sha256Kernel kernel(gpu);
  for (unsigned per_thread : {2u, 4u}) {
    kernel.set_tuning({.block = 128, .per_thread = per_thread});
    const std::size_t count = 100003;
    auto data = random_bytes(rng, 32 * count);
    auto in = upload(gpu, data);
    auto out = gpu.alloc<std::uint8_t>(count * 32);
    kernel.fixed(HashAlgo::sha256, in, 32, out);
    EXPECT_EQ(first_mismatch(out.to_host(), fixed_messages(data, 32, count), HashAlgo::sha256), "") << per_thread;
  }
}

}  // namespace
