// A backend device for lifetime tests: "compiles" a program into a small binary without any
// compiler, "loads" it into a module that counts how many of its kind are alive, and has no
// memory or launches of its own. Fast enough to compile ten thousand distinct programs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "opkit/backend.hpp"
#include "opkit/error.hpp"

namespace opkit_test {

class FakeStream final : public opkit::backend::Stream {
 public:
  void synchronize() override {}
  void* native_handle() override { return nullptr; }
};

class FakeFunction final : public opkit::backend::Function {
 public:
  void launch(const opkit::LaunchConfig&, opkit::backend::Stream&, void**, const std::size_t*, std::size_t) override {}
  opkit::KernelAttributes attributes() override { return {}; }
  opkit::backend::ParamInfo params() override { return {}; }
};

class FakeModule final : public opkit::backend::Module {
 public:
  explicit FakeModule(std::vector<std::uint8_t> image) : image_(std::move(image)) { ++alive; }
  ~FakeModule() override { --alive; }
  FakeModule(const FakeModule&) = delete;
  FakeModule& operator=(const FakeModule&) = delete;

  std::shared_ptr<opkit::backend::Function> function(const std::string& symbol) override {
    return symbol == "fake_kernel" ? std::make_shared<FakeFunction>() : nullptr;
  }
  const std::vector<std::uint8_t>& image() const { return image_; }

  static inline std::atomic<long> alive{0};  // FakeModules in existence, process-wide

 private:
  std::vector<std::uint8_t> image_;  // a copy of the binary, as a real loader keeps one
};

class FakeBackend final : public opkit::backend::Backend {
 public:
  std::string name() const override { return "fake"; }
  bool is_gpu() const override { return false; }
  int dlpack_device_type() const override { return 1; }
  std::string kernel_language() const override { return "fake"; }
  bool available() override { return false; }
  std::string unavailable_reason() override { return "a test double, not registered"; }
  int device_count() override { return 0; }
  std::shared_ptr<opkit::backend::Device> device(int) override {
    throw opkit::Error(opkit::Errc::unavailable, "FakeBackend", "no devices");
  }
  opkit::CompiledProgram compile(const opkit::ProgramSpec&, const std::string&) override {
    throw opkit::Error(opkit::Errc::unavailable, "FakeBackend", "compiles through FakeDevice::compile");
  }
  std::string compiler_identity(const std::string&) override { return "fake-compiler-1"; }

  static FakeBackend& instance() {
    static FakeBackend backend;
    return backend;
  }
};

class FakeDevice final : public opkit::backend::Device {
 public:
  // binary_bytes: the size of each "compiled" binary, so that a leak shows in the RSS.
  explicit FakeDevice(std::size_t binary_bytes = 4096) : binary_bytes_(binary_bytes) {
    info_.name = "fake device";
    info_.arch = "fake";
  }

  opkit::backend::Backend& backend() const override { return FakeBackend::instance(); }
  const opkit::DeviceInfo& info() const override { return info_; }
  // What a compiler would make of `spec`, without one: counted in `compiles`.
  opkit::CompiledProgram compile(const opkit::ProgramSpec& spec) {
    ++compiles;
    opkit::CompiledProgram out;
    out.format = opkit::BinaryFormat::host_dso;
    out.target = "fake";
    out.source_name = spec.name;
    // The binary starts with what identifies the program: its defines, then its source.
    std::string text;
    for (const auto& [name, value] : spec.defines) text += name + "=" + value + ";";
    text += spec.source;
    out.binary.assign(std::max(binary_bytes_, text.size()), 0);
    std::copy(text.begin(), text.end(), out.binary.begin());
    out.lowered_names["fake_kernel"] = "fake_kernel";
    return out;
  }
  std::string compiler_identity() { return FakeBackend::instance().compiler_identity(info_.arch); }
  std::shared_ptr<opkit::backend::Module> load(const opkit::CompiledProgram& program) override {
    return std::make_shared<FakeModule>(program.binary);
  }

  void* allocate(std::size_t) override { throw opkit::Error(opkit::Errc::unavailable, "FakeDevice", "no memory"); }
  void deallocate(void*) noexcept override {}
  void copy(void*, const void*, std::size_t, opkit::CopyKind, opkit::backend::Stream*) override {}
  void fill(void*, std::uint32_t, std::size_t, std::size_t, opkit::backend::Stream*) override {}
  std::size_t free_memory() override { return 0; }

  std::shared_ptr<opkit::backend::Stream> default_stream() override { return stream_; }
  std::shared_ptr<opkit::backend::Stream> create_stream() override { return std::make_shared<FakeStream>(); }
  std::shared_ptr<opkit::backend::Stream> borrow_stream(void*) override { return std::make_shared<FakeStream>(); }
  std::shared_ptr<opkit::backend::Event> create_event() override {
    throw opkit::Error(opkit::Errc::unavailable, "FakeDevice", "no events");
  }
  void synchronize() override {}

  std::atomic<long> compiles{0};

 private:
  std::size_t binary_bytes_;
  opkit::DeviceInfo info_;
  std::shared_ptr<FakeStream> stream_ = std::make_shared<FakeStream>();
};

}  // namespace opkit_test
