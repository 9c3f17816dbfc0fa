// SHA-256 and SHA-256d on every target against one-shot OpenSSL (EVP), on fresh random messages:
// the operator's kernels on each device (fixed and variable length, device buffers at unaligned
// addresses, several messages a thread), the public API's host-data and device-buffer paths, and
// the native OpenSSL path on host.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "conformance/devices.hpp"
#include "opkit/buffer.hpp"
#include "opkit/error.hpp"
#include "opkit/module.hpp"
#include "opkit/ops/sha256.hpp"
#include "opkit/target.hpp"
#include "unit/nvrtc_required.hpp"
#include "unit/test_sha256_reference.hpp"

namespace {

using opkit::ops::HashAlgo;
using opkit::ops::HashOptions;
using opkit::test::Target;
using namespace opkit::test;

OPKIT_CONFORMANCE_OPERATOR_SUITE(Sha256, opkit::ops::sha256_support());

std::mt19937_64 fresh_rng() {
  std::random_device device;
  return std::mt19937_64((std::uint64_t{device()} << 32) | device());
}

template <class T>
opkit::DeviceBuffer<T> upload(const opkit::Device& device, std::span<const T> host, std::size_t shift = 0) {
  auto buffer = device.alloc<T>(std::max<std::size_t>(host.size() + shift, 1));
  if (!host.empty()) buffer.view().subview(shift, host.size()).copy_from(host);
  return buffer;
}

// The public host-data API on the target: that device, or the native path on host.
HashOptions host_data_options(const Target& target) {
  return target.is_host() ? HashOptions{.host_cpu = true} : HashOptions{.device = target.device};
}

// A fixed-length batch through the operator's own kernel on a device (messages and digests
// `shift` bytes past an aligned address, so every load and store width is taken), or the native
// path on host.
std::vector<std::uint8_t> hash_fixed(const Target& target, HashAlgo algo, std::span<const std::uint8_t> data,
                                     std::size_t len, std::size_t count, std::size_t shift = 0,
                                     opkit::ops::Sha256Kernel::Tuning tuning = {}) {
  std::vector<std::uint8_t> digests(count * 32);
  if (target.is_host()) {
    if (algo == HashAlgo::sha256)
      opkit::ops::sha256(data, len, digests, host_data_options(target));
    else
      opkit::ops::sha256d(data, len, digests, host_data_options(target));
    return digests;
  }
  const opkit::Device& device = *target.device;
  opkit::ops::Sha256Kernel kernel(device);
  kernel.set_tuning(tuning);
  auto in = upload(device, data, shift);
  auto out = device.alloc<std::uint8_t>(count * 32 + shift);
  auto out_view = out.view().subview(shift, count * 32);
  kernel.fixed(algo, opkit::BufferView<const std::uint8_t>(in.view()).subview(shift, data.size()), len, out_view);
  device.synchronize();
  return out_view.to_host();
}

// A variable-length batch through the operator's kernel on a device, or the native path on host.
std::vector<std::uint8_t> hash_variable(const Target& target, HashAlgo algo, const VariableBatch& batch) {
  const std::size_t count = batch.offsets.size() - 1;
  std::vector<std::uint8_t> digests(count * 32);
  if (target.is_host()) {
    if (algo == HashAlgo::sha256)
      opkit::ops::sha256(batch.data, batch.offsets, digests, host_data_options(target));
    else
      opkit::ops::sha256d(batch.data, batch.offsets, digests, host_data_options(target));
    return digests;
  }
  const opkit::Device& device = *target.device;
  auto data = upload<std::uint8_t>(device, batch.data);
  auto offsets = upload<std::uint64_t>(device, batch.offsets);
  auto out = device.alloc<std::uint8_t>(count * 32);
  opkit::ops::Sha256Kernel(device).variable(algo, opkit::BufferView<const std::uint8_t>(data.view()),
                                            opkit::BufferView<const std::uint64_t>(offsets.view()), out);
  return out.to_host();
}

// Each length around a word boundary of the one-block, two-tail-block and whole-block cases.
// The fixed-length kernel is compiled per length, so a device is checked on every padding shape
// rather than every length (the variable-length test covers every length 0..300 in one compile);
// host compiles nothing and takes every length.
std::vector<std::size_t> padding_shapes(const Target& target) {
  if (target.is_host()) {
    std::vector<std::size_t> every(301);
    for (std::size_t len = 0; len <= 300; ++len) every[len] = len;
    return every;
  }
  return {0,  1,  2,  3,   4,   5,   7,   8,   31,  32,  33,  54,  55,  56,  57,  60,  63,
          64, 65, 80, 100, 118, 119, 120, 121, 127, 128, 129, 191, 192, 200, 255, 256, 300};
}

// The largest power of two up to `cap` dividing every value, as Sha256Kernel picks alignments.
unsigned alignment_of(std::initializer_list<std::uint64_t> values, unsigned cap) {
  unsigned align = cap;
  for (std::uint64_t v : values)
    while (align > 1 && v % align != 0) align /= 2;
  return align;
}

// Many fixed-length programs as one: each shape's program (the operator's own source and -D
// values) in a namespace of its own with its kernel renamed, so that a device compiles every
// shape at once. A CPU-backend compile costs seconds, a good part of it per compiler run
// (4 shapes: 10.5 s at once, 16.9 s one by one), which would make 45 shapes minutes.
struct BatchedShapes {
  opkit::Program program{""};
  std::vector<std::string> kernels;  // kernel i runs program i
};

BatchedShapes batch_programs(const std::vector<opkit::Program>& programs) {
  const opkit::ProgramSpec& first = programs.front().spec();
  std::string source;
  for (const auto& [header, content] : first.headers) source += "#include \"" + header + "\"\n";
  BatchedShapes batch;
  for (std::size_t i = 0; i < programs.size(); ++i) {
    const std::string space = "shape_" + std::to_string(i), kernel = "sha256_fixed_" + std::to_string(i);
    for (const auto& [macro, value] : programs[i].spec().defines)
      source += "#undef " + macro + "\n#define " + macro + " " + value + "\n";
    source += "#define sha256_fixed " + kernel + "\nnamespace " + space + " {\n#include \"" + first.name +
              "\"\n}\n#undef sha256_fixed\n";
    batch.kernels.push_back(space + "::" + kernel);
  }
  batch.program = opkit::Program(source).name("sha256_fixed_shapes.cu").header(first.name, first.source);
  for (const auto& [header, content] : first.headers) batch.program.header(header, content);
  for (const auto& kernel : batch.kernels) batch.program.name_expression(kernel);
  return batch;
}

// Every padding shape (fresh random batches of 1..700 messages, at rotating shifts) through the
// operator's fixed-length kernel source on a device, compiled as one program; on host through
// the native path.
void expect_every_padding_shape_matches(const Target& target, HashAlgo algo) {
  auto rng = fresh_rng();
  const std::size_t shifts[] = {0, 1, 4, 8};  // 16-, 1-, 4- and 8-byte aligned messages and digests
  struct Shape {
    std::size_t len, count, shift;
    std::vector<std::uint8_t> data;
  };
  std::vector<Shape> shapes;
  std::vector<opkit::Program> programs;
  const std::size_t most = target.is_host() ? 50 : 700;  // host has 301 lengths, a device 34
  for (std::size_t len : padding_shapes(target)) {
    if (algo == HashAlgo::sha256d && len % 8 != 0) continue;
    const std::size_t count = 1 + rng() % most, shift = shifts[shapes.size() % 4];
    shapes.push_back({len, count, shift, random_bytes(rng, len * count)});
    // Buffers start 256-byte aligned, so the shift and the length decide the access widths.
    const unsigned store_align = shift % 16 == 0 ? 16 : (shift % 4 == 0 ? 4 : 1);
    programs.push_back(opkit::ops::sha256_fixed_program(algo, len, alignment_of({shift, len}, 16), store_align));
  }
  if (target.is_host()) {
    for (const Shape& s : shapes)
      ASSERT_EQ(first_mismatch(hash_fixed(target, algo, s.data, s.len, s.count), fixed_messages(s.data, s.len, s.count),
                               algo),
                "")
          << opkit::ops::hash_algo_name(algo) << " length " << s.len;
    return;
  }
  const opkit::Device& device = *target.device;
  const BatchedShapes batch = batch_programs(programs);
  const opkit::Module module = device.compile(batch.program);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    auto in = upload<std::uint8_t>(device, s.data, s.shift);
    auto out = device.alloc<std::uint8_t>(s.count * 32 + s.shift);
    const unsigned block = 128;  // the kernel's launch contract: any 1-D block, one message a thread
    module.kernel(batch.kernels[i])
        .launch({.grid = static_cast<unsigned>((s.count + block - 1) / block), .block = block}, in.data() + s.shift,
                out.data() + s.shift, static_cast<unsigned long long>(s.count));
    ASSERT_EQ(first_mismatch(out.view().subview(s.shift, s.count * 32).to_host(),
                             fixed_messages(s.data, s.len, s.count), algo),
              "")
        << opkit::ops::hash_algo_name(algo) << " length " << s.len << " shift " << s.shift;
  }
}

// The batched program is valid CUDA too (checked without a GPU): NVRTC resolves every kernel.
TEST(Sha256Shapes, BatchedProgramCompilesUnderNvrtcWithEveryKernelNamed) {
  OPKIT_REQUIRE_NVRTC();
  const BatchedShapes batch = batch_programs({opkit::ops::sha256_fixed_program(HashAlgo::sha256, 55, 1, 16),
                                              opkit::ops::sha256_fixed_program(HashAlgo::sha256d, 64, 16, 4)});
  const auto compiled = opkit::compile(batch.program, opkit::Target::cuda("sm_90"));
  for (const auto& kernel : batch.kernels) EXPECT_EQ(compiled.lowered_names.count(kernel), 1u) << kernel;
}

TEST_P(Sha256, KnownAnswersFromFips180) {
  const std::string abc = "abc", two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  std::vector<std::uint8_t> data(abc.begin(), abc.end());
  data.insert(data.end(), two_blocks.begin(), two_blocks.end());
  VariableBatch batch{data, {0, 0, 3, data.size()}, {}};
  auto digests = hash_variable(target(), HashAlgo::sha256, batch);
  EXPECT_EQ(hex(std::span(digests).subspan(0, 32)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(std::span(digests).subspan(32, 32)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(std::span(digests).subspan(64, 32)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Bitcoin's double SHA-256 of the empty string.
  const auto double_hashed = hash_variable(target(), HashAlgo::sha256d, batch);
  EXPECT_EQ(hex(std::span(double_hashed).subspan(0, 32)),
            "5df6e0e2761359d30a8275058e299fcc0381534545f55cf43e41983f5d4c9456");
}

TEST_P(Sha256, FixedSha256BatchesOfEveryPaddingShapeMatchOpenSsl) {
  expect_every_padding_shape_matches(target(), HashAlgo::sha256);
}

TEST_P(Sha256, FixedSha256dBatchesOfEveryPaddingShapeMatchOpenSsl) {
  expect_every_padding_shape_matches(target(), HashAlgo::sha256d);
}

TEST_P(Sha256, VariableBatchOfLengths0To300WithUnalignedOffsetsMatchesOpenSsl) {
  auto rng = fresh_rng();
  std::vector<std::size_t> lengths;
  for (int copy = 0; copy < 20; ++copy)
    for (std::size_t len = 0; len <= 300; ++len) lengths.push_back(len);
  for (int i = 0; i < 300; ++i) lengths.push_back(rng() % 5000);
  std::shuffle(lengths.begin(), lengths.end(), rng);
  auto batch = make_variable_batch(rng, lengths);
  for (HashAlgo algo : {HashAlgo::sha256, HashAlgo::sha256d})
    ASSERT_EQ(first_mismatch(hash_variable(target(), algo, batch), variable_messages(batch), algo), "")
        << opkit::ops::hash_algo_name(algo);
}

TEST_P(Sha256, LongMessagesUpToOneMebibyteMatchOpenSsl) {
  auto rng = fresh_rng();
  for (std::size_t len : {std::size_t{1000}, std::size_t{65536 + 7}, std::size_t{1} << 20}) {
    const std::size_t count = 3;
    auto data = random_bytes(rng, len * count);
    EXPECT_EQ(first_mismatch(hash_fixed(target(), HashAlgo::sha256, data, len, count), fixed_messages(data, len, count),
                             HashAlgo::sha256),
              "")
        << len;
    // The same messages as a variable-length batch.
    VariableBatch batch{data, {0, len, 2 * len, 3 * len}, {}};
    EXPECT_EQ(first_mismatch(hash_variable(target(), HashAlgo::sha256, batch), fixed_messages(data, len, count),
                             HashAlgo::sha256),
              "")
        << len;
  }
}

TEST_P(Sha256, SeveralMessagesPerThreadAndPartialBlocksMatchOpenSsl) {
  if (target().is_host()) GTEST_SKIP() << "host has no kernel launch shape";
  auto rng = fresh_rng();
  for (unsigned per_thread : {2u, 4u}) {
    const std::size_t count = 100003;  // not a multiple of block * per_thread: tail threads and clamping
    auto data = random_bytes(rng, 32 * count);
    auto digests = hash_fixed(target(), HashAlgo::sha256, data, 32, count, 0, {.block = 128, .per_thread = per_thread});
    EXPECT_EQ(first_mismatch(digests, fixed_messages(data, 32, count), HashAlgo::sha256), "") << per_thread;
  }
}

TEST_P(Sha256, EmptyBatchAndBatchOfOne) {
  std::vector<std::uint8_t> none;
  const HashOptions options = host_data_options(target());
  opkit::ops::sha256(std::span<const std::uint8_t>(), 32, std::span<std::uint8_t>(none), options);
  std::vector<std::uint64_t> one_offset{0};
  opkit::ops::sha256(std::span<const std::uint8_t>(), one_offset, std::span<std::uint8_t>(none), options);
  auto rng = fresh_rng();
  auto data = random_bytes(rng, 32);
  EXPECT_EQ(first_mismatch(hash_fixed(target(), HashAlgo::sha256d, data, 32, 1), fixed_messages(data, 32, 1),
                           HashAlgo::sha256d),
            "");
  // Three empty messages: message_bytes 0, the count given by the digest buffer.
  std::vector<std::uint8_t> digests(3 * 32);
  opkit::ops::sha256(std::span<const std::uint8_t>(), 0, digests, options);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(hex(std::span<const std::uint8_t>(digests).subspan(32 * i, 32)),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// The public API on host data: on a GPU, chunked through device memory (4 KiB chunks: dozens of
// chunks through the two-slot pipeline, and messages larger than a chunk).
TEST_P(Sha256, HostDataThroughManySmallChunksMatchesOpenSsl) {
  auto rng = fresh_rng();
  HashOptions small_chunks = host_data_options(target());
  small_chunks.chunk_bytes = 4096;
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

// The public API on device buffers (hashed where they live) at unaligned addresses.
TEST_P(Sha256, DeviceBuffersInAndOutAtUnalignedAddressesMatchOpenSsl) {
  OPKIT_DEVICE_OR_SKIP(device, "device buffers");
  auto rng = fresh_rng();
  for (std::size_t shift : {0, 1, 4, 8}) {
    for (std::size_t len : {32, 64, 80, 1024}) {
      const std::size_t count = 1000 + rng() % 1000;
      auto data = random_bytes(rng, len * count);
      auto in = upload<std::uint8_t>(device, data, shift);
      auto out = device.alloc<std::uint8_t>(count * 32 + shift);
      auto out_view = out.view().subview(shift, count * 32);
      opkit::ops::sha256(opkit::BufferView<const std::uint8_t>(in.view()).subview(shift, len * count), len, out_view);
      ASSERT_EQ(first_mismatch(out_view.to_host(), fixed_messages(data, len, count), HashAlgo::sha256), "")
          << "shift " << shift << " length " << len;
    }
  }
}

TEST_P(Sha256, DeviceVariableBatchOnAStreamMatchesOpenSsl) {
  OPKIT_DEVICE_OR_SKIP(device, "device buffers or streams");
  auto rng = fresh_rng();
  std::vector<std::size_t> lengths;
  for (int i = 0; i < 5000; ++i) lengths.push_back(rng() % 300);
  auto batch = make_variable_batch(rng, lengths);
  auto data = upload<std::uint8_t>(device, batch.data);
  auto offsets = upload<std::uint64_t>(device, batch.offsets);
  auto out = device.alloc<std::uint8_t>(lengths.size() * 32);
  opkit::Stream stream = device.create_stream();
  opkit::ops::sha256d(opkit::BufferView<const std::uint8_t>(data.view()),
                      opkit::BufferView<const std::uint64_t>(offsets.view()), out, {.stream = &stream});
  EXPECT_EQ(first_mismatch(out.to_host(), variable_messages(batch), HashAlgo::sha256d), "");
}

void expect_bad_offsets_error(const std::function<void()>& hash, const std::string& message) {
  try {
    hash();
    ADD_FAILURE() << "bad offsets were accepted";
  } catch (const opkit::Error& e) {
    EXPECT_EQ(e.kind(), opkit::Errc::invalid_argument);
    EXPECT_NE(e.message().find(message), std::string::npos) << e.message();
  }
}

// Offsets past the end (message 2) and backwards (message 1), through the public API and, on a
// device, through the kernel, which finds them on the device.
TEST_P(Sha256, BadOffsetsAreReportedByMessageIndex) {
  const std::vector<std::uint8_t> bytes(100, 7);
  const std::vector<std::uint64_t> past_end{0, 10, 20, 200}, backwards{0, 10, 5, 20};
  std::vector<std::uint8_t> digests(3 * 32);
  if (target().is_host()) {
    expect_bad_offsets_error([&] { opkit::ops::sha256(bytes, past_end, digests, host_data_options(target())); },
                             "message 2");
    expect_bad_offsets_error([&] { opkit::ops::sha256(bytes, backwards, digests, host_data_options(target())); },
                             "message 1");
    return;
  }
  const opkit::Device& device = *target().device;
  auto data = upload<std::uint8_t>(device, bytes);
  auto out = device.alloc<std::uint8_t>(3 * 32);
  for (const auto& [offsets, message] : {std::pair{past_end, "message 2"}, std::pair{backwards, "message 1"}}) {
    auto on_device = upload<std::uint64_t>(device, offsets);
    const opkit::BufferView<const std::uint8_t> in(data.view());
    const opkit::BufferView<const std::uint64_t> offs(on_device.view());
    expect_bad_offsets_error([&] { opkit::ops::sha256(in, offs, out); }, message);
    expect_bad_offsets_error([&] { opkit::ops::Sha256Kernel(device).variable(HashAlgo::sha256, in, offs, out); },
                             message);
  }
}

}  // namespace
