// The "cpu-deferred" backend (see cpu_deferred.hpp): a CPU-backend device wrapped so that its
// streams queue their work and run it when waited for, or at random moments.
#include "cpu_deferred.hpp"

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../cpu_wrapper_backend.hpp"
#include "opkit/backend.hpp"
#include "opkit/cpu_backend.hpp"
#include "opkit/error.hpp"
#include "opkit/registry.hpp"

namespace opkit::test {
namespace {

class DeferredStream final : public backend::Stream, public std::enable_shared_from_this<DeferredStream> {
 public:
  ~DeferredStream() override {
    try {  // a GPU finishes the work of a stream destroyed with work queued
      synchronize();
    } catch (...) {
    }
  }
  void synchronize() override { run_to(ops_.size()); }
  void* native_handle() override { return this; }
  void wait(backend::Event& event) override;

  // Queues `op`. The stream runs in phases drawn at random when it is made and each time its work
  // has run: eager (each op runs as it is queued, as on an idle GPU) or lazy (nothing runs until
  // something waits for it, as behind a long kernel). So a missing wait between two streams shows
  // whichever way round it is: work that ran ahead of what it should have waited for (an eager
  // stream beside a lazy one), or work read before it ran (a lazy one).
  void queue(std::function<void()> op) {
    ops_.push_back(std::move(op));
    if (eager_) synchronize();
  }
  std::size_t queued() const { return ops_.size(); }
  // Runs the work queued before position `end`. An op counts as started before it runs, so that
  // a wait inside it never runs it again.
  void run_to(std::size_t end) {
    while (next_ < end) {
      std::function<void()> op = std::exchange(ops_[next_++], nullptr);
      op();
    }
    eager_ = coin_(engine_) == 0;
  }

 private:
  std::deque<std::function<void()>> ops_;
  std::size_t next_ = 0;
  std::mt19937 engine_{std::random_device{}()};
  std::uniform_int_distribution<int> coin_{0, 1};
  bool eager_ = coin_(engine_) == 0;
};

DeferredStream& deferred(backend::Stream& stream) {
  auto* ours = dynamic_cast<DeferredStream*>(&stream);
  if (ours == nullptr) throw Error(Errc::invalid_argument, "cpu-deferred backend", "a stream of another backend");
  return *ours;
}

class DeferredEvent final : public backend::Event {
 public:
  void record(backend::Stream& stream) override {
    stream_ = deferred(stream).shared_from_this();
    position_ = stream_->queued();
  }
  void synchronize() override {
    if (stream_) stream_->run_to(position_);
  }
  float elapsed_ms_since(backend::Event&) override { return 0; }

  std::weak_ptr<DeferredStream> stream() const { return stream_; }
  std::size_t position() const { return position_; }

 private:
  std::shared_ptr<DeferredStream> stream_;
  std::size_t position_ = 0;
};

void DeferredStream::wait(backend::Event& event) {
  auto* ours = dynamic_cast<DeferredEvent*>(&event);
  if (ours == nullptr) throw Error(Errc::invalid_argument, "Stream::wait", "the event belongs to another backend");
  // A stream gone ran its work when it went.
  queue([stream = ours->stream(), position = ours->position()] {
    if (auto s = stream.lock()) s->run_to(position);
  });
}

// Launches queued on the stream they were given, with copies of their argument values.
class DeferredFunction final : public backend::Function {
 public:
  DeferredFunction(std::shared_ptr<backend::Function> inner, std::shared_ptr<backend::Stream> run_on)
      : inner_(std::move(inner)), run_on_(std::move(run_on)) {}

  void launch(const LaunchConfig& config, backend::Stream& stream, void** args, const std::size_t* sizes,
              std::size_t count) override {
    std::vector<std::vector<std::uint8_t>> values;
    for (std::size_t i = 0; i < count; ++i) {
      const auto* bytes = static_cast<const std::uint8_t*>(args[i]);
      values.emplace_back(bytes, bytes + sizes[i]);
    }
    LaunchConfig queued = config;
    queued.stream = nullptr;  // the caller's Stream object may be gone when the launch runs
    deferred(stream).queue([inner = inner_, run_on = run_on_, queued, values = std::move(values),
                            sizes = std::vector<std::size_t>(sizes, sizes + count)]() mutable {
      std::vector<void*> pointers;
      for (auto& value : values) pointers.push_back(value.data());
      inner->launch(queued, *run_on, pointers.data(), sizes.data(), sizes.size());
    });
  }
  KernelAttributes attributes() override { return inner_->attributes(); }
  backend::ParamInfo params() override { return inner_->params(); }

 private:
  std::shared_ptr<backend::Function> inner_;
  std::shared_ptr<backend::Stream> run_on_;  // the CPU device's stream: it runs a launch when called
};

class DeferredModule final : public backend::Module {
 public:
  DeferredModule(std::shared_ptr<backend::Module> inner, std::shared_ptr<backend::Stream> run_on)
      : inner_(std::move(inner)), run_on_(std::move(run_on)) {}

  std::shared_ptr<backend::Function> function(const std::string& symbol) override {
    std::shared_ptr<backend::Function> inner = inner_->function(symbol);
    return inner ? std::make_shared<DeferredFunction>(std::move(inner), run_on_) : nullptr;
  }
  std::optional<GlobalVariable> global(const std::string& symbol) override { return inner_->global(symbol); }

 private:
  std::shared_ptr<backend::Module> inner_;
  std::shared_ptr<backend::Stream> run_on_;
};

class DeferredDevice final : public backend::Device {
 public:
  explicit DeferredDevice(backend::Backend& owner) : owner_(owner), inner_(backend::make_cpu_device(0)) {
    info_ = inner_->info();
    info_.backend = owner.name();
    info_.name += " (streams run when waited for)";
  }

  backend::Backend& backend() const override { return owner_; }
  const DeviceInfo& info() const override { return info_; }
  std::shared_ptr<backend::Module> load(const CompiledProgram& program) override {
    return std::make_shared<DeferredModule>(inner_->load(program), inner_->default_stream());
  }

  void* allocate(std::size_t bytes) override { return inner_->allocate(bytes); }
  // Memory that is not stream-ordered (cuMemAlloc / cuMemFree): the free waits for the device's
  // work first, as cuMemFree does.
  void deallocate(void* ptr) noexcept override {
    try {
      synchronize();
    } catch (...) {  // a faulted launch: nothing more of it runs
    }
    inner_->deallocate(ptr);
  }
  // Stream-ordered memory (cuMemAllocAsync / cuMemFreeAsync): allocated at once, freed when the
  // stream reaches the free, not before the call returns.
  void* allocate_on(std::size_t bytes, backend::Stream&) override { return inner_->allocate(bytes); }
  void deallocate_on(void* ptr, backend::Stream& stream) noexcept override {
    try {
      deferred(stream).queue([inner = inner_, ptr] { inner->deallocate(ptr); });
    } catch (...) {  // not one of ours (never): freed at once
      inner_->deallocate(ptr);
    }
  }
  void* allocate_pinned(std::size_t bytes) override {
    void* ptr = inner_->allocate_pinned(bytes);
    const std::lock_guard lock(mutex_);
    pinned_[reinterpret_cast<std::uintptr_t>(ptr)] = bytes;
    return ptr;
  }
  void deallocate_pinned(void* ptr) noexcept override {
    {
      const std::lock_guard lock(mutex_);
      pinned_.erase(reinterpret_cast<std::uintptr_t>(ptr));
    }
    inner_->deallocate_pinned(ptr);
  }

  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, backend::Stream* stream) override {
    if (bytes == 0) return;
    if (stream == nullptr) {  // synchronous: behind the default stream's work
      default_->synchronize();
      inner_->copy(dst, src, bytes, kind, nullptr);
      return;
    }
    DeferredStream& s = deferred(*stream);
    if (kind == CopyKind::device_to_host && !pinned(dst)) {  // pageable: returns once written
      s.synchronize();
      std::memcpy(dst, src, bytes);
      return;
    }
    s.queue([dst, src, bytes] { std::memmove(dst, src, bytes); });
  }
  void fill(void* dst, std::uint32_t pattern, std::size_t pattern_bytes, std::size_t count,
            backend::Stream* stream) override {
    if (stream == nullptr) {
      default_->synchronize();
      inner_->fill(dst, pattern, pattern_bytes, count, nullptr);
      return;
    }
    deferred(*stream).queue([inner = inner_, dst, pattern, pattern_bytes, count] {
      inner->fill(dst, pattern, pattern_bytes, count, nullptr);
    });
  }
  std::size_t free_memory() override { return inner_->free_memory(); }

  std::shared_ptr<backend::Stream> default_stream() override { return default_; }
  std::shared_ptr<backend::Stream> create_stream() override {
    auto stream = std::make_shared<DeferredStream>();
    const std::lock_guard lock(mutex_);
    created_.push_back(stream);
    return stream;
  }
  std::shared_ptr<backend::Stream> borrow_stream(void*) override { return create_stream(); }
  std::shared_ptr<backend::Event> create_event() override { return std::make_shared<DeferredEvent>(); }
  void synchronize() override {
    default_->synchronize();
    std::vector<std::shared_ptr<DeferredStream>> alive;
    {
      const std::lock_guard lock(mutex_);
      for (const auto& weak : created_)
        if (auto stream = weak.lock()) alive.push_back(std::move(stream));
    }
    for (const auto& stream : alive) stream->synchronize();
  }

 private:
  bool pinned(const void* p) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const std::lock_guard lock(mutex_);
    auto it = pinned_.upper_bound(at);
    if (it == pinned_.begin()) return false;
    --it;
    return at < it->first + it->second;
  }

  backend::Backend& owner_;
  std::shared_ptr<backend::Device> inner_;
  DeviceInfo info_;
  std::shared_ptr<DeferredStream> default_ = std::make_shared<DeferredStream>();
  std::mutex mutex_;
  std::map<std::uintptr_t, std::size_t> pinned_;  // start -> bytes
  std::vector<std::weak_ptr<DeferredStream>> created_;
};

}  // namespace

void register_cpu_deferred_backend() {
  static std::once_flag once;
  std::call_once(once, [] { register_backend(std::make_shared<CpuWrapperBackend<DeferredDevice>>("cpu-deferred")); });
}

}  // namespace opkit::test
