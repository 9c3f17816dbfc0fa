// CUDA streams and events. Destructors ignore failures: they must never throw.
#include "cuda_backend.hpp"

namespace opkit::cuda {

CudaStream::CudaStream(CudaDevice& device, std::shared_ptr<CudaDevice> keep_alive, CUstream stream, bool owned)
    : device_(device), keep_alive_(std::move(keep_alive)), stream_(stream), owned_(owned) {}

CudaStream::~CudaStream() {
  if (owned_ && stream_ != nullptr) device_.api().cuStreamDestroy(stream_);
}

void CudaStream::synchronize() {
  device_.make_current();
  const DriverApi& api = device_.api();
  device_.wait(
      "cuStreamSynchronize", [&] { return api.cuStreamQuery(stream_); },
      [&] { return api.cuStreamSynchronize(stream_); });
}

void CudaStream::wait(backend::Event& event) {
  auto* cuda_event = dynamic_cast<CudaEvent*>(&event);
  if (cuda_event == nullptr)
    throw Error(Errc::invalid_argument, "Stream::wait", "the event belongs to another backend");
  device_.make_current();
  check(device_.api().cuStreamWaitEvent(stream_, cuda_event->handle(), 0), "cuStreamWaitEvent");
}

namespace {

// CUDA_ERROR_NOT_READY is "still running"; any other failure (a faulted kernel) is an error.
bool is_done(CUresult rc, const char* stage) {
  if (rc == CUDA_ERROR_NOT_READY) return false;
  check(rc, stage);
  return true;
}

}  // namespace

bool CudaStream::query() {
  device_.make_current();
  return is_done(device_.api().cuStreamQuery(stream_), "cuStreamQuery");
}

CudaEvent::CudaEvent(std::shared_ptr<CudaDevice> device) : device_(std::move(device)) {
  device_->make_current();
  check(device_->api().cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate");
}

CudaEvent::~CudaEvent() {
  if (event_ != nullptr) device_->api().cuEventDestroy(event_);
}

void CudaEvent::record(backend::Stream& stream) {
  device_->make_current();
  check(device_->api().cuEventRecord(event_, static_cast<CudaStream&>(stream).handle()), "cuEventRecord");
}

void CudaEvent::synchronize() {
  const DriverApi& api = device_->api();
  device_->wait(
      "cuEventSynchronize", [&] { return api.cuEventQuery(event_); }, [&] { return api.cuEventSynchronize(event_); });
}

bool CudaEvent::query() {
  device_->make_current();
  return is_done(device_->api().cuEventQuery(event_), "cuEventQuery");
}

float CudaEvent::elapsed_ms_since(backend::Event& start) {
  float ms = 0;
  check(device_->api().cuEventElapsedTime(&ms, static_cast<CudaEvent&>(start).event_, event_), "cuEventElapsedTime");
  return ms;
}

}  // namespace opkit::cuda
