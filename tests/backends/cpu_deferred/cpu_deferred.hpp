// A test-only backend, "cpu-deferred": the CPU backend's compiler, kernels and memory, with the
// ordering of a GPU's streams instead of the CPU backend's (which runs work as it is queued).
// Work queued on a stream (launches, copies, fills, waits for events) runs in the stream's order,
// but at a time of its own: when something waits for it (the stream's or an event's synchronize,
// a synchronous copy or fill, which follow the default stream's work, a wait queued on another
// stream when that one runs, the stream destroyed) or as it is queued: a stream runs in phases
// drawn at random when it is made and each time its work has run, eager (each op runs as it is
// queued) or lazy (nothing runs until waited for). So work on two streams that no event orders
// runs in either order, as it may on a GPU, and a missing wait shows as a wrong result on a
// machine without one (more often than not, over many calls: a side stream that its caller's
// stream does not wait for is caught in most runs of the AES two-stream test). A copy on a stream
// reads its source when it runs, pageable host memory too: CUDA documents that the driver stages
// pageable memory before an asynchronous copy returns, but on an H100 (driver 580) a call that
// freed its table right after queueing its copy sent other bytes
// (src/ops/cipher/host_bytes_in_flight.hpp); a copy into pageable host memory returns once its
// stream has reached it; stream-ordered memory is freed when its stream reaches the free, other
// device memory after the device's work has run (as cuMemFree waits). It joins the conformance
// suite's targets (tests/conformance/devices.cpp), so every operator's conformance cases also run
// with a GPU's stream ordering on a machine without one.
#pragma once

namespace opkit::test {

// Registers "cpu-deferred" once per process (later calls do nothing).
void register_cpu_deferred_backend();

}  // namespace opkit::test
