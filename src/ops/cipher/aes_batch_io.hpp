// How AES runs where there is a choice. Which IO batch AES-CTR runs (the CTR pass of aes_ctr_xor_batch and of the GCM
// batches): the staged kernel (aes_ctr_batch: a block's bytes fetched into shared memory while its keystream is
// computed, then moved by consecutive threads on consecutive 16-byte chunks) or the direct one (aes_ctr at stride 1:
// each thread loads and stores its own 512 bytes), kept for A/B measurements. Both give the same bytes.
#pragma once

#include "opkit/device.hpp"

namespace opkit::ops::aes {

enum class BatchIo { staged, direct };

// The process-wide choice: `staged` unless set_batch_io chose otherwise or, before that, the
// environment variable OPKIT_AES_BATCH_IO said "direct" (read at the first call of either).
BatchIo batch_io() noexcept;
void set_batch_io(BatchIo io) noexcept;

// Messages a slice of a batch call holds (each slice has its setup and keystream launches, and
// slices alternate between the call's stream and a side stream): 2^18 unless set; 0 restores that.
// Tests set a few, so that small batches run many slices on both streams.
std::size_t batch_slice_messages() noexcept;
void set_batch_slice_messages(std::size_t messages) noexcept;

// Whether batch CTR on `device` runs the staged kernel: the choice above, where the device can
// (the CPU backend, and CUDA GPUs from sm_80: cp.async, and more than 64 KiB of shared memory a
// block, which sm_75 lacks).
bool staged_batch_io(const Device& device);

// What computes bulk GCM's GHASH over whole chunks of data: the tensor cores' 1-bit matrix
// products (aes_ghash_mma, kernels/aes_ghash_mma.cuh) or the Horner loop of aes_ghash (which also
// takes the rest of every stream, and all of it where the tensor-core form cannot run), kept for
// A/B measurements. Both give the same tags. `tensor_cores` unless set_ghash_engine chose
// otherwise or, before that, the environment variable OPKIT_AES_GHASH said "horner".
enum class GhashEngine { tensor_cores, horner };
GhashEngine ghash_engine() noexcept;
void set_ghash_engine(GhashEngine engine) noexcept;

// Whether bulk GHASH on `device` uses the tensor cores: the choice above, on CUDA GPUs from sm_80
// (the 1-bit MMA with AND and population count).
bool tensor_core_ghash(const Device& device);

}  // namespace opkit::ops::aes
