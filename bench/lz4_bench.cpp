// LZ4 throughput on each corpus file: opkit's kernels device-resident (data in device memory,
// results left there; CUDA events around compress and decompress, best and median of the runs),
// and the host engine (liblz4 blocks on all cores, wall clock, host memory). Every GPU frame is
// checked: it must equal the host engine's byte for byte and decode back to the corpus.
//   opkit_lz4_bench [--block 4..7] [--runs N] FILE...
// Prints one line per file and engine: ratio, compress GB/s, decompress GB/s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"
#include "opkit/stream.hpp"
#include "lz4/device_lz4.hpp"
#include "lz4/frame_format.hpp"
#include "lz4/kernels/lz4_status.h"

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace lz4 = opkit::ops::lz4;

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw opkit::Error(opkit::Errc::io, "lz4_bench", "cannot read " + path);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

struct Times {
  double best = 0, median = 0;  // seconds
};

template <class F>
Times time_events(const opkit::Device& device, int runs, F&& run) {
  opkit::Stream stream = device.default_stream();
  std::vector<double> seconds;
  run();  // warm-up (and first-use compilation)
  for (int r = 0; r < runs; ++r) {
    opkit::Event start = device.create_event(), stop = device.create_event();
    start.record(stream);
    run();
    stop.record(stream);
    stop.synchronize();
    seconds.push_back(opkit::Event::elapsed_ms(start, stop) / 1e3);
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

template <class F>
Times time_wall(int runs, F&& run) {
  std::vector<double> seconds;
  run();
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

double gbps(std::size_t bytes, double seconds) {
  return static_cast<double>(bytes) / seconds / 1e9;
}

void print(const std::string& file, const char* engine, std::size_t n, std::size_t packed, Times c, Times d) {
  std::printf("%-28s %-22s ratio %.3f  compress %7.2f GB/s (median %7.2f)  decompress %7.2f GB/s (median %7.2f)\n",
              file.c_str(), engine, static_cast<double>(n) / static_cast<double>(packed), gbps(n, c.best),
              gbps(n, c.median), gbps(n, d.best), gbps(n, d.median));
  std::fflush(stdout);
}

// Returns false when a GPU result is wrong.
bool bench_gpu(const opkit::Device& gpu, const std::string& name, const Bytes& data, unsigned id, int runs) {
  const std::size_t block_bytes = lz4::block_max_bytes(id);
  lz4::DeviceLz4 engine(gpu);
  opkit::DeviceBuffer<std::uint8_t> in = gpu.alloc<std::uint8_t>(data.size());
  in.copy_from(data);
  std::optional<lz4::DeviceLz4::Section> packed;
  const Times c = time_events(gpu, runs, [&] { packed.emplace(engine.encode(in, block_bytes, false)); });
  const lz4::DeviceLz4::Section& section = *packed;

  lz4::FrameSettings settings;
  settings.block_size_id = id;
  settings.content_checksum = false;
  Bytes frame;
  lz4::append_frame_header(frame, settings);
  const std::size_t header = frame.size();
  frame.resize(header + section.size);
  section.bytes.view()
      .subview(0, section.size)
      .copy_to(std::span<std::uint8_t>(frame.data() + header, section.size));
  lz4::append_le32(frame, 0);
  opkit::ops::Lz4CompressOptions host;
  host.block_size = static_cast<opkit::ops::Lz4BlockSize>(id);
  host.content_checksum = false;
  bool ok = frame == opkit::ops::lz4_compress(data, host);
  if (!ok) std::printf("%s: GPU frame differs from the host engine's\n", name.c_str());

  const lz4::ParsedInput parsed = lz4::parse_frames(frame);
  std::vector<std::size_t> slots{0};
  for (const lz4::BlockRef& b : parsed.blocks)
    slots.push_back(slots.back() +
                    std::min<std::size_t>(b.max_decoded, b.raw ? b.stored : std::size_t{255} * b.stored));
  opkit::DeviceBuffer<std::uint8_t> d_frame = gpu.alloc<std::uint8_t>(frame.size());
  d_frame.copy_from(frame);
  const lz4::DeviceLz4::BlockTable table = engine.table(parsed.blocks, 0, slots);
  opkit::DeviceBuffer<std::uint8_t> out = gpu.alloc<std::uint8_t>(std::max<std::size_t>(slots.back(), 1));
  opkit::DeviceBuffer<std::uint32_t> sizes = gpu.alloc<std::uint32_t>(std::max<std::size_t>(table.count, 1));
  opkit::DeviceBuffer<std::uint32_t> status = gpu.alloc<std::uint32_t>(std::max<std::size_t>(table.count, 1));
  const Times d = time_events(gpu, runs, [&] { engine.decode(d_frame, table, out, sizes, status); });
  const std::vector<std::uint8_t> decoded = out.to_host();
  const std::vector<std::uint32_t> st = status.to_host(), sz = sizes.to_host();
  for (std::size_t i = 0; i < table.count && ok; ++i) {
    const std::size_t at = i * block_bytes, n = std::min(block_bytes, data.size() - at);
    ok = st[i] == LZ4K_OK && sz[i] == n && std::memcmp(decoded.data() + slots[i], data.data() + at, n) == 0;
    if (!ok) std::printf("%s: GPU decode of block %zu is wrong (status %u)\n", name.c_str(), i, st[i]);
  }
  print(name, ok ? "opkit gpu (device)" : "opkit gpu WRONG", data.size(), frame.size(), c, d);
  return ok;
}

void bench_host(const std::string& name, const Bytes& data, unsigned id, int runs) {
  opkit::ops::Lz4CompressOptions o;
  o.block_size = static_cast<opkit::ops::Lz4BlockSize>(id);
  o.content_checksum = false;
  Bytes frame;
  const Times c = time_wall(runs, [&] { frame = opkit::ops::lz4_compress(data, o); });
  Bytes back;
  const Times d = time_wall(runs, [&] { back = opkit::ops::lz4_decompress(frame); });
  print(name, back == data ? "liblz4 host all cores" : "liblz4 host WRONG", data.size(), frame.size(), c, d);
}

}  // namespace

int main(int argc, char** argv) try {
  unsigned id = 4;
  int runs = 5;
  bool cpu_backend = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--block" && i + 1 < argc)
      id = static_cast<unsigned>(std::stoi(argv[++i]));
    else if (a == "--cpu-backend")  // the kernels on the CPU backend: checks this program without a GPU
      cpu_backend = true;
    else if (a == "--runs" && i + 1 < argc)
      runs = std::stoi(argv[++i]);
    else
      files.push_back(a);
  }
  std::optional<opkit::Device> gpu;
  try {
    gpu = cpu_backend ? opkit::Device::cpu() : opkit::Device::cuda(0);
    std::printf("device: %s, block size %zu KiB\n", gpu->info().name.c_str(), lz4::block_max_bytes(id) >> 10);
  } catch (const opkit::Error& e) {
    std::printf("no GPU (%s): host engine only\n", e.message().c_str());
  }
  bool ok = true;
  for (const std::string& path : files) {
    const Bytes data = read_file(path);
    const std::string name =
        path.substr(path.find_last_of('/') + 1) + " (" + std::to_string(data.size() >> 20) + " MiB)";
    if (gpu) ok = bench_gpu(*gpu, name, data, id, runs) && ok;
    bench_host(name, data, id, runs);
  }
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 3;
}
