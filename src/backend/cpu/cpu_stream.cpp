// CpuEvent: steady_clock time points (see cpu_stream.hpp).
#include "cpu_stream.hpp"

#include "opkit/error.hpp"

namespace opkit::cpu {

void CpuEvent::record(backend::Stream&) {
  time_ = std::chrono::steady_clock::now();
  recorded_ = true;
}

float CpuEvent::elapsed_ms_since(backend::Event& start) {
  auto* begin = dynamic_cast<CpuEvent*>(&start);
  if (begin == nullptr)
    throw Error(Errc::invalid_argument, "Event::elapsed_ms", "the start event belongs to another backend");
  if (!recorded_ || !begin->recorded_)
    throw Error(Errc::invalid_argument, "Event::elapsed_ms", "both events must be recorded before timing them");
  return std::chrono::duration<float, std::milli>(time_ - begin->time_).count();
}

}  // namespace opkit::cpu
