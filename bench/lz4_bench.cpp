// LZ4 throughput on each corpus file, device-resident on the GPU (CUDA events, best and median
// of the runs): the kernels alone (compress step, decode kernel), the public API on device
// buffers without and with the content checksum; and the host engine (liblz4 blocks on all
// cores, wall clock, host memory). Every result is checked: everything must decode back to the
// corpus, on the device and (API frames) with the host engine, liblz4.
//   opkit_lz4_bench [--block 4..7] [--runs N] [--cpu-backend] [--threads 1..32] [--blocks-per-cta 1|2|4]
//   [--hash-bytes 4|5] [--kernels-only [--table-entries N]] [--decoder-variant NAME=VALUE[,NAME=VALUE]]... FILE...
// Prints one line per file and engine: ratio, compress GB/s, decompress GB/s. Each
// --decoder-variant adds a kernels row whose decode kernel is lz4_decompress.cu built with that
// definition (e.g. LZ4K_SHORT=64), or another decoder file (file=PATH), timed over the same blocks
// right after the kernels'.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lz4/block_codec.hpp"
#include "lz4/device_lz4.hpp"
#include "lz4/frame_format.hpp"
#include "lz4/kernels/lz4_status.h"
#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/lz4.hpp"
#include "opkit/stream.hpp"
#include "program_definitions.hpp"

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

// `run` between two events on the default stream; `before`, untimed, ahead of each run.
template <class F, class G>
Times time_events(const opkit::Device& device, int runs, F&& run, G&& before) {
  opkit::Stream stream = device.default_stream();
  std::vector<double> seconds;
  run();  // warm-up (and first-use compilation)
  for (int r = 0; r < runs; ++r) {
    before();
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
Times time_events(const opkit::Device& device, int runs, F&& run) {
  return time_events(device, runs, std::forward<F>(run), [] {});
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
  std::printf("%-28s %-26s ratio %.3f  compress %7.2f GB/s (median %7.2f)  decompress %7.2f GB/s (median %7.2f)\n",
              file.c_str(), engine, static_cast<double>(n) / static_cast<double>(packed), gbps(n, c.best),
              gbps(n, c.median), gbps(n, d.best), gbps(n, d.median));
  std::fflush(stdout);
}

// The compressor's settings (DeviceLz4's constructor; 0: the device's choice).
struct Tuning {
  unsigned table_entries = lz4::DeviceLz4::default_small_table_entries;
  unsigned compress_threads = 0;
  unsigned blocks_per_cta = 0;
  unsigned hash_bytes = lz4::DeviceLz4::default_small_hash_bytes;
  std::vector<std::string> decoder_variants;  // NAME=VALUE definitions for lz4_decompress.cu
};

// A --decoder-variant's decode kernel: "NAME=VALUE,..." builds lz4_decompress.cu with those
// definitions; "file=PATH[,NAME=VALUE,...]" builds the decoder in PATH instead (another version of
// it, timed on the same blocks), with lz4_decompress.cu's headers.
opkit::Program decoder_program(const std::string& variant) {
  opkit::Program kernel_file = lz4::kernel_program("lz4_decompress.cu");
  if (variant.rfind("file=", 0) != 0) {
    define_all(kernel_file, variant, "--decoder-variant");
    return kernel_file;
  }
  const std::size_t comma = variant.find(',');
  const std::string path = variant.substr(5, comma == std::string::npos ? std::string::npos : comma - 5);
  const Bytes text = read_file(path);
  opkit::Program program(std::string(text.begin(), text.end()));
  program.name(path.substr(path.find_last_of('/') + 1));
  for (const auto& [header, content] : kernel_file.spec().headers) program.header(header, content);
  if (comma != std::string::npos) define_all(program, variant.substr(comma + 1), "--decoder-variant");
  return program;
}

// The kernels alone, device-resident: the compress step (kernel + its block sizes to the host)
// and the decode kernel over a block table built beforehand. Returns false when a result is wrong.
bool bench_kernels(const opkit::Device& gpu, const std::string& name, const Bytes& data, unsigned id, int runs,
                   const Tuning& t) {
  const std::size_t block_bytes = lz4::block_max_bytes(id);
  const lz4::DeviceLz4 engine(gpu, t.table_entries, t.compress_threads, t.blocks_per_cta, t.hash_bytes);
  opkit::DeviceBuffer<std::uint8_t> in = gpu.alloc<std::uint8_t>(data.size());
  in.copy_from(data);
  const std::size_t count = (data.size() + block_bytes - 1) / block_bytes;
  std::vector<unsigned long long> in_at(count);
  std::vector<std::uint32_t> in_len(count);
  for (std::size_t i = 0; i < count; ++i) {
    in_at[i] = i * block_bytes;
    in_len[i] = static_cast<std::uint32_t>(std::min(block_bytes, data.size() - i * block_bytes));
  }
  const lz4::DeviceLz4::Blocks blocks = engine.blocks(in.data(), in_at, in_len);
  std::optional<lz4::DeviceLz4::Compressed> packed;
  const Times c = time_events(gpu, runs, [&] { packed.emplace(engine.compress(blocks, false)); });

  // Decode straight from the compressed slots (raw blocks stay raw): one table, one launch.
  std::vector<unsigned long long> out_at(count);
  std::vector<std::uint32_t> words(packed->host_words), caps(count);
  std::vector<unsigned long long> slot_at(count);
  std::size_t stored = 0;
  for (std::size_t i = 0; i < count; ++i) {
    slot_at[i] = i * packed->slot_bytes;
    out_at[i] = i * block_bytes;
    caps[i] = in_len[i];
    stored += 4 + (words[i] & ~lz4::uncompressed_bit);
  }
  const lz4::DeviceLz4::BlockTable table = engine.table(slot_at, words, out_at, caps);
  opkit::DeviceBuffer<std::uint8_t> out = gpu.alloc<std::uint8_t>(data.size());
  opkit::DeviceBuffer<std::uint32_t> sizes = gpu.alloc<std::uint32_t>(count), status = gpu.alloc<std::uint32_t>(count);
  const Times d = time_events(
      gpu, runs, [&] { engine.decode(packed->slots.data(), table, out.data(), sizes.data(), status.data()); });
  const std::vector<std::uint32_t> st = status.to_host();
  bool ok = out.to_host() == data && std::all_of(st.begin(), st.end(), [](std::uint32_t s) { return s == LZ4K_OK; });
  if (!ok) std::printf("%s: the kernels' round trip is wrong\n", name.c_str());
  // The table's entries, the LZ4 blocks a thread block and the bytes the hash reads, e.g. "opkit kernels 2624e x1 h5".
  const std::string engine_name = "opkit kernels " + std::to_string(t.table_entries) + "e x" +
                                  std::to_string(engine.blocks_per_cta()) + " h" + std::to_string(t.hash_bytes);
  print(name, ok ? engine_name.c_str() : "opkit kernels WRONG", data.size(), stored + 7 + 4, c, d);
  for (const std::string& variant : t.decoder_variants) {
    opkit::Program program = decoder_program(variant);
    opkit::Kernel kernel = gpu.compile(program).kernel("lz4_decompress");
    out.fill(0);
    const Times v = time_events(gpu, runs, [&] {
      kernel.launch({.grid = static_cast<std::uint32_t>(count), .block = 32}, packed->slots.data(), table.in_at,
                    table.in_len, out.data(), table.out_at, table.caps, sizes.data(), status.data());
    });
    const std::vector<std::uint32_t> vs = status.to_host();
    const bool right =
        out.to_host() == data && std::all_of(vs.begin(), vs.end(), [](std::uint32_t s) { return s == LZ4K_OK; });
    ok = ok && right;
    const std::string row = "opkit decode " + variant;
    print(name, right ? row.c_str() : "opkit decode variant WRONG", data.size(), stored + 7 + 4, c, v);
  }
  return ok;
}

// The public API on device buffers (lz4_compress / lz4_decompress of a BufferView): frame
// assembly, the host parse of the frame's structure (a copy of the frame comes down), packing,
// and with content_checksum the host xxHash32 of the content (a copy of the data comes down).
bool bench_api(const opkit::Device& gpu, const std::string& name, const Bytes& data, unsigned id, int runs,
               bool content_checksum) {
  opkit::DeviceBuffer<std::uint8_t> in = gpu.alloc<std::uint8_t>(data.size());
  in.copy_from(data);
  opkit::ops::Lz4CompressOptions o;
  o.block_size = static_cast<opkit::ops::Lz4BlockSize>(id);
  o.content_checksum = content_checksum;
  o.content_size = true;
  std::optional<opkit::DeviceBuffer<std::uint8_t>> frame;
  const Times c = time_events(gpu, runs, [&] { frame.emplace(opkit::ops::lz4_compress(in.view(), o)); });
  std::optional<opkit::DeviceBuffer<std::uint8_t>> back;
  const Times d = time_events(gpu, runs, [&] { back.emplace(opkit::ops::lz4_decompress(frame->view())); });
  // Where the API's time beyond the kernels goes: the same call with the previous result freed
  // before the timing (cuMemFree of the output waits for the device and unmaps it), and a bare
  // allocation and free of the output's size.
  if (!content_checksum) {
    const Times kept = time_events(
        gpu, runs, [&] { back.emplace(opkit::ops::lz4_decompress(frame->view())); }, [&] { back.reset(); });
    const Times alloc = time_events(gpu, runs, [&] { (void)gpu.alloc<std::uint8_t>(data.size()); });
    std::printf(
        "%-28s %-26s API decode %.3f ms (%.3f ms with the last result freed outside the timing); "
        "alloc + free of the output alone %.3f ms\n",
        name.c_str(), "opkit API where time goes", d.best * 1e3, kept.best * 1e3, alloc.best * 1e3);
  }
  const Bytes host_frame = frame->to_host();
  // The device's parse is its own (not byte-identical to liblz4's): the host engine (liblz4)
  // must decode the frame exactly.
  bool ok = back->to_host() == data && opkit::ops::lz4_decompress(std::span<const std::uint8_t>(host_frame)) == data;
  if (!ok) std::printf("%s: the API's frame does not round-trip (device or liblz4)\n", name.c_str());
  const char* engine = content_checksum ? "opkit API +content xxh32" : "opkit API device bufs";
  print(name, ok ? engine : "opkit API WRONG", data.size(), host_frame.size(), c, d);
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
  Tuning tuning;
  bool cpu_backend = false;
  bool kernels_only = false;  // the kernels alone (the API's table unless --table-entries): no API, no host engine
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--block" && i + 1 < argc)
      id = static_cast<unsigned>(std::stoi(argv[++i]));
    else if (a == "--cpu-backend")  // the kernels on the CPU backend: checks this program without a GPU
      cpu_backend = true;
    else if (a == "--threads" && i + 1 < argc)  // the compressor's threads per block (1..32)
      tuning.compress_threads = static_cast<unsigned>(std::stoi(argv[++i]));
    else if (a == "--blocks-per-cta" && i + 1 < argc)  // the compressor's LZ4 blocks a thread block (1, 2, 4)
      tuning.blocks_per_cta = static_cast<unsigned>(std::stoi(argv[++i]));
    else if (a == "--hash-bytes" && i + 1 < argc)  // the smaller table's hash: 4 or 5 bytes
      tuning.hash_bytes = static_cast<unsigned>(std::stoi(argv[++i]));
    else if (a == "--decoder-variant" && i + 1 < argc)
      tuning.decoder_variants.push_back(argv[++i]);
    else if (a == "--kernels-only")
      kernels_only = true;
    else if (a == "--table-entries" && i + 1 < argc)
      tuning.table_entries = static_cast<unsigned>(std::stoi(argv[++i]));
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
    // Each step on its own: a failing one prints its error and the others still run.
    auto step = [&](const char* what, auto&& body) {
      try {
        ok = body() && ok;
      } catch (const std::exception& e) {
        std::printf("%s: %s failed: %s\n", name.c_str(), what, e.what());
        ok = false;
      }
      std::fflush(stdout);
    };
    if (gpu && kernels_only) {
      step("kernels", [&] { return bench_kernels(*gpu, name, data, id, runs, tuning); });
      continue;
    }
    if (gpu) {
      Tuning full = tuning;  // liblz4's table: 8192 entries hashing 4 bytes
      full.table_entries = 8192;
      full.hash_bytes = 4;
      step("kernels", [&] { return bench_kernels(*gpu, name, data, id, runs, full); });
      if (id == 4)  // the smaller table (the API's unless --table-entries): its speed and ratio
        step("kernels, the smaller table", [&] { return bench_kernels(*gpu, name, data, id, runs, tuning); });
      step("API", [&] { return bench_api(*gpu, name, data, id, runs, false); });
      step("API with content checksum", [&] { return bench_api(*gpu, name, data, id, runs, true); });
    }
    step("host", [&] {
      bench_host(name, data, id, runs);
      return true;
    });
  }
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 3;
}
