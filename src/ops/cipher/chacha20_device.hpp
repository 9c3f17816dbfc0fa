// ChaCha20 and ChaCha20-Poly1305 on one device of any backend: the embedded kernels
// (kernels/chacha20_*.cu) compiled for it and launched. The device-specific part of the cipher
// operators (with the AES launchers of aes_device.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "cipher_checks.hpp"
#include "opkit/kernel.hpp"
#include "tag_out.hpp"

namespace opkit::ops::detail {

// One message of `bytes` at device pointers in/out (exactly in place or disjoint). iv: the
// 16-byte form from check_message. For the AEAD, aad (host memory) is authenticated and the
// 16-byte tag computed (over the ciphertext: the output when encrypting, the input when
// decrypting) is written to tag (16 bytes; host memory: the call waits for it; device memory:
// nothing waits, finish_call). Device key material is zeroed on the stream behind the kernels.
// variant: where the kernels come from when not from the library's cached chacha20_bulk program
// (benchmarks time programs compiled with other -D settings).
using KernelVariant = std::function<Kernel(const char* name)>;
void chacha20_device_bulk(const Device& device, bool aead, bool decrypt, Bytes key, const Iv16& iv, Bytes aad,
                          const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, TagOut tag,
                          const Stream* stream, const KernelVariant& variant = {});

// A checked batch at device pointers in/out; offsets are host offsets into them (fixed-length
// batches pass none to the device). Keys, IVs and AAD in host or device memory (batch_inputs.hpp).
// AEAD encryption writes 16 bytes of tag per message to tags_out: host memory (the call waits for
// them) or device memory on `device` (nothing waits, finish_call). AEAD decryption compares each
// message's tag with tags_expected (16 bytes each; host memory is uploaded once, device memory on
// `device` read in place) in the kernel, which zeroes a failing message's output; the call waits
// for the kernel's failure count (8 bytes back) and copies the per-message verdicts back only when
// it is not zero. Returns the messages whose tag did not verify (ascending; their output zero).
std::vector<std::size_t> chacha20_device_batch(const Device& device, bool aead, bool decrypt, const CipherBatch& batch,
                                               const BatchBounds& bounds, const CheckedBatch& checked,
                                               const std::uint8_t* in, std::uint8_t* out, TagOut tags_out,
                                               TagIn tags_expected, const Stream* stream);

}  // namespace opkit::ops::detail
