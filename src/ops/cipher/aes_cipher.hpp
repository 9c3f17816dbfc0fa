// AES-CTR and AES-GCM of the public cipher API on one device of any backend: host-memory keys,
// IVs, AAD and tags moved to the device and the aes_device.hpp entry points called. The AES
// counterpart of chacha20_device.hpp; GCM tags are verified on the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cipher_checks.hpp"
#include "tag_out.hpp"

namespace opkit::ops::detail {

// One checked message of `bytes` at device pointers in/out (exactly in place or disjoint). iv: the
// 16-byte counter block for CTR; GCM takes key.iv (its nonce). Encryption writes the GCM tag to
// tag_out (its size the tag length); decryption checks tag_expected and returns false on a
// mismatch, having written nothing to out. Waits for the device unless the call is CTR or GCM
// encryption with the tag in device memory (and a stream given: finish_call).
bool aes_device_bulk(const Device& device, Cipher cipher, bool encrypt, const CipherKey& key, const Iv16& iv,
                     const std::uint8_t* in, std::uint8_t* out, std::size_t bytes, TagOut tag_out, Bytes tag_expected,
                     const Stream* stream);

// A checked batch at device pointers in/out (bounds: where each message lies in them); keys, IVs
// and AAD in host or device memory (batch_inputs.hpp). GCM tags of checked.tag_bytes per message:
// tags_out host memory (the call waits for them) or device memory on `device` (nothing waits,
// finish_call); tags_expected host memory (uploaded once) or device memory on `device` (read in
// place), compared on the device. Returns the messages whose tag did not verify (ascending; their
// out bytes not written). CTR and GCM into device tags wait only without a stream; the others
// wait for the device.
std::vector<std::size_t> aes_device_batch(const Device& device, Cipher cipher, bool encrypt, const CipherBatch& batch,
                                          const BatchBounds& bounds, const CheckedBatch& checked,
                                          const std::uint8_t* in, std::uint8_t* out, TagOut tags_out,
                                          TagIn tags_expected, const Stream* stream);

}  // namespace opkit::ops::detail
