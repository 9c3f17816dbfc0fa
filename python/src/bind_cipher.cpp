// opkit.encrypt / opkit.decrypt over DLPack arrays (include/opkit/ops/cipher.hpp): one message (a
// contiguous uint8 array of any shape) or a batch ([N, L] uint8 with a key and IV per row), run
// where the data lives. CUDA data stays on its GPU: the input is borrowed, the output is a new
// device allocation returned through DLPack, and the work is queued on the stream the caller
// names. Keys, IVs, AAD and tags are host bytes, except a batch's keys, IVs and expected tags (and
// opkit.torch's AAD), which may be CUDA memory on the data's GPU: read there in place, no host
// round trip.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "interruptible.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/cipher.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {
namespace {

using Bytes = std::span<const std::uint8_t>;

ops::Cipher parse_cipher(const std::string& name) {
  if (auto cipher = ops::cipher_from_name(name)) return *cipher;
  throw Error(Errc::invalid_argument, "cipher",
              "unknown cipher '" + name +
                  "' (aes-128-ctr, aes-192-ctr, aes-256-ctr, aes-128-gcm, aes-192-gcm, aes-256-gcm, chacha20, "
                  "chacha20-poly1305)");
}

Bytes bytes_of(const nb::bytes& b) {
  return Bytes(static_cast<const std::uint8_t*>(static_cast<const void*>(b.c_str())), b.size());
}

// The host array's bytes (keys, IVs, tags of a batch), C-contiguous uint8.
Bytes host_bytes(const AnyArray& array, const char* what) {
  if (!on_host(array))
    throw Error(Errc::invalid_argument, "cipher", std::string(what) + " must be host memory (bytes or a host array)");
  require_dtype(array, 8, true, what);
  require_contiguous(array, what);
  return Bytes(static_cast<const std::uint8_t*>(array.data()), array.size());
}

// A batch's keys, IVs or expected tags: host bytes, or CUDA memory on the data's GPU (the cipher
// API checks that it is that GPU, and says which it is). `gpu` unset: host data, which takes host
// ones.
struct BatchInput {
  Bytes host;
  std::optional<BufferView<const std::uint8_t>> device;
};

BatchInput batch_input(const AnyArray& array, const std::optional<Device>& gpu, const char* what) {
  if (on_host(array)) return {host_bytes(array, what), std::nullopt};
  if (!gpu)
    throw Error(Errc::invalid_argument, "cipher",
                std::string(what) + " are CUDA memory but the data is host memory: pass host " + what +
                    " (or move the data to that GPU)");
  require_dtype(array, 8, true, what);
  require_contiguous(array, what);
  return {{},
          BufferView<const std::uint8_t>(cuda_device_of(array, what), static_cast<const std::uint8_t*>(array.data()),
                                         array.size())};
}

std::vector<std::size_t> shape_of(const AnyArray& array) {
  std::vector<std::size_t> shape(array.ndim());
  for (std::size_t i = 0; i < shape.size(); ++i) shape[i] = array.shape(i);
  return shape;
}

// Where the work runs and the output lives: host data (out a new NumPy array; on `device` when
// one is named, else OpenSSL on the host) or CUDA data (out a new allocation on its GPU).
struct Output {
  nb::object array;
  std::uint8_t* data = nullptr;
  std::optional<Device> gpu;
  std::optional<Stream> stream;
};

Output make_output(const AnyArray& data, std::size_t bytes, const std::optional<Device>& device,
                   std::optional<std::uintptr_t> stream) {
  Output out;
  const std::vector<std::size_t> shape = shape_of(data);
  if (on_host(data)) {
    auto host = host_array(1, bytes);
    out.data = host.data();
    out.array = nb::cast(host);
    return out;
  }
  Device gpu = cuda_device_of(data, "cipher");
  if (device && !(*device == gpu))
    throw Error(Errc::invalid_argument, "cipher",
                "the data lives on " + gpu.id() + " but device=" + device->id() +
                    " was requested (move the data, or drop device=)");
  void* raw = nullptr;
  out.array = nb::cast(device_array(gpu, shape, nb::dtype<std::uint8_t>(), &raw));
  out.data = static_cast<std::uint8_t*>(raw);
  if (stream) out.stream = gpu.borrow_stream(address(*stream));
  out.gpu = std::move(gpu);
  return out;
}

ops::CipherOptions options_for(const std::optional<Device>& device, const Output& out) {
  ops::CipherOptions options;
  if (!out.gpu) options.device = device;
  options.stream = out.stream ? &*out.stream : nullptr;
  return options;
}

void check_data(const AnyArray& data) {
  require_dtype(data, 8, true, "cipher data");
  require_contiguous(data, "cipher data");
}

// One message. Returns (output array, tag bytes: the new tag when encrypting an AEAD, else empty).
std::pair<nb::object, nb::bytes> bulk(AnyArray data, const std::string& cipher_name, bool encrypt, const nb::bytes& key,
                                      const nb::bytes& iv, const nb::bytes& aad, std::optional<nb::bytes> tag,
                                      std::size_t tag_bytes, const std::optional<Device>& device,
                                      std::optional<std::uintptr_t> stream, std::uint32_t chacha20_counter) {
  const ops::Cipher cipher = parse_cipher(cipher_name);
  check_data(data);
  const std::size_t n = data.size();
  Output out = make_output(data, n, device, stream);
  ops::CipherOptions options = options_for(device, out);
  options.chacha20_counter = chacha20_counter;
  const ops::CipherKey k{bytes_of(key), bytes_of(iv), bytes_of(aad)};
  const bool aead = ops::cipher_traits(cipher).aead;
  std::string new_tag(encrypt && aead ? tag_bytes : 0, '\0');
  const Bytes expected = tag ? bytes_of(*tag) : Bytes{};
  auto* tag_out = reinterpret_cast<std::uint8_t*>(new_tag.data());
  const auto* in = static_cast<const std::uint8_t*>(data.data());
  {
    nb::gil_scoped_release unlocked;
    if (out.gpu) {
      const BufferView<const std::uint8_t> src(*out.gpu, in, n);
      const BufferView<std::uint8_t> dst(*out.gpu, out.data, n);
      if (encrypt)
        ops::encrypt(cipher, k, src, dst, {tag_out, new_tag.size()}, options);
      else
        ops::decrypt(cipher, k, src, dst, expected, options);
    } else if (encrypt) {
      ops::encrypt(cipher, k, Bytes(in, n), {out.data, n}, {tag_out, new_tag.size()}, options);
    } else {
      ops::decrypt(cipher, k, Bytes(in, n), {out.data, n}, expected, options);
    }
  }
  return {out.array, nb::bytes(new_tag.data(), new_tag.size())};
}

// A batch: data [N, L], keys [N, key_bytes], ivs [N, iv_bytes], tags [N, 16] (decrypt of an
// AEAD). Keys, IVs and tags are host arrays, or CUDA arrays on the data's GPU (read in place; CUDA
// tags are compared there, nothing but the verdict comes back). Returns (output [N, L], tags
// [N, 16] as bytes when encrypting an AEAD, else empty).
std::pair<nb::object, nb::bytes> batch(AnyArray data, const std::string& cipher_name, bool encrypt, AnyArray keys,
                                       AnyArray ivs, std::optional<AnyArray> tags, const std::optional<Device>& device,
                                       std::optional<std::uintptr_t> stream, std::uint32_t chacha20_counter) {
  const ops::Cipher cipher = parse_cipher(cipher_name);
  check_data(data);
  if (data.ndim() != 2)
    throw Error(Errc::invalid_argument, "cipher",
                "a batch is a 2-D [N, L] uint8 array, got " + std::to_string(data.ndim()) + " dimension(s)");
  const std::size_t count = data.shape(0);
  if (keys.ndim() != 2 || keys.shape(0) != count || ivs.ndim() != 2 || ivs.shape(0) != count)
    throw Error(Errc::invalid_argument, "cipher",
                "a batch of " + std::to_string(count) + " messages takes [N, key_bytes] keys and [N, iv_bytes] IVs");
  const bool aead = ops::cipher_traits(cipher).aead;
  Output out = make_output(data, data.size(), device, stream);
  ops::CipherOptions options = options_for(device, out);
  options.chacha20_counter = chacha20_counter;
  const BatchInput batch_keys = batch_input(keys, out.gpu, "keys"), batch_ivs = batch_input(ivs, out.gpu, "ivs");
  const ops::CipherBatch b{.count = count,
                           .message_bytes = data.shape(1),
                           .keys = batch_keys.host,
                           .ivs = batch_ivs.host,
                           .iv_bytes = ivs.shape(1),
                           .device_keys = batch_keys.device,
                           .device_ivs = batch_ivs.device};
  std::string new_tags(encrypt && aead ? count * ops::aead_tag_bytes : 0, '\0');
  const BatchInput expected = tags ? batch_input(*tags, out.gpu, "tags") : BatchInput{};
  const std::span<std::uint8_t> tags_out(reinterpret_cast<std::uint8_t*>(new_tags.data()), new_tags.size());
  const auto* in = static_cast<const std::uint8_t*>(data.data());
  const std::size_t n = data.size();
  {
    nb::gil_scoped_release unlocked;
    if (out.gpu) {
      const BufferView<const std::uint8_t> src(*out.gpu, in, n);
      const BufferView<std::uint8_t> dst(*out.gpu, out.data, n);
      if (encrypt)
        ops::encrypt_batch(cipher, b, src, dst, tags_out, options);
      else if (expected.device)
        ops::decrypt_batch(cipher, b, src, dst, *expected.device, options);
      else
        ops::decrypt_batch(cipher, b, src, dst, expected.host, options);
    } else if (encrypt) {
      ops::encrypt_batch(cipher, b, Bytes(in, n), {out.data, n}, tags_out, options);
    } else {
      ops::decrypt_batch(cipher, b, Bytes(in, n), {out.data, n}, expected.host, options);
    }
  }
  return {out.array, nb::bytes(new_tags.data(), new_tags.size())};
}

// The entry of the cipher ops of opkit.torch: raw addresses, because the caller already holds the
// tensors, has checked their dtypes, shapes, contiguity and devices (and the key and IV sizes),
// and allocated `out` (and the tag) through its own caching allocator. `rows` x `message_bytes`
// bytes at `in` go to `out` (the same size; the same address or disjoint). One message
// (batch false, rows 1): key, iv, aad and tag are that message's. A batch: key is rows x
// key_bytes, iv rows x (iv_bytes / rows), aad rows x (aad_bytes / rows) (none when 0), tag rows x
// 16. Key, IV and AAD are host memory unless key_on_device / iv_on_device / aad_on_device (a
// batch on `gpu`: that input is device memory there, read in place); the tag is host memory unless
// tag_on_device (on `gpu`, an AEAD encryption's tag or tags, or a batch decryption's expected
// tags: device memory there); the tag is written when encrypting an AEAD, verified when decrypting
// one (a mismatch raises opkit.AuthenticationError and zeroes the output) and unused (tag_bytes 0)
// for CTR and ChaCha20. `gpu` unset: host memory, through OpenSSL on the host CPU. `gpu` set:
// device memory, queued on `stream` (the framework's current stream); an AEAD encryption waits for
// it to bring a host tag to the host, and not for a device tag; a decryption waits for its
// verdict. Waits answer Ctrl-C.
void cipher_at(const std::string& cipher_name, bool encrypt, std::optional<Device> gpu, std::uintptr_t in,
               std::uintptr_t out, bool batch, std::size_t rows, std::size_t message_bytes, std::uintptr_t key,
               std::size_t key_bytes, std::uintptr_t iv, std::size_t iv_bytes, std::uintptr_t aad,
               std::size_t aad_bytes, std::uintptr_t tag, std::size_t tag_bytes, bool tag_on_device,
               std::uintptr_t stream, std::uint32_t chacha20_counter, bool key_on_device, bool iv_on_device,
               bool aad_on_device) {
  const ops::Cipher cipher = parse_cipher(cipher_name);
  if (batch && rows == 0) return;
  if ((key_on_device || iv_on_device || aad_on_device) && !(batch && gpu))
    throw Error(Errc::invalid_argument, "cipher",
                "keys, IVs and AAD in device memory are for a batch on a GPU; one message takes them in host memory");
  if (tag_on_device && !(gpu && (encrypt || batch)))
    throw Error(Errc::invalid_argument, "cipher",
                "a tag in device memory is for data on a GPU, and for decryption only for a batch; one message's "
                "decryption takes its tag in host memory");
  const auto host = [](std::uintptr_t at, std::size_t size) {
    return Bytes(static_cast<const std::uint8_t*>(address(at)), size);
  };
  const std::size_t n = rows * message_bytes;
  const auto* src = static_cast<const std::uint8_t*>(address(in));
  auto* dst = static_cast<std::uint8_t*>(address(out));
  auto* tag_at = static_cast<std::uint8_t*>(address(tag));
  ops::CipherOptions options;
  options.chacha20_counter = chacha20_counter;
  std::optional<Stream> borrowed;
  if (gpu) {
    borrowed = gpu->borrow_stream(address(stream));
    options.stream = &*borrowed;
  }
  // The AAD of row i is aad[i * row_aad, (i + 1) * row_aad).
  std::vector<std::uint64_t> aad_offsets;
  if (batch && aad_bytes != 0) {
    aad_offsets.resize(rows + 1);
    for (std::size_t i = 0; i <= rows; ++i) aad_offsets[i] = i * (aad_bytes / rows);
  }
  interruptible([&] {
    if (!batch) {
      const ops::CipherKey k{host(key, key_bytes), host(iv, iv_bytes), host(aad, aad_bytes)};
      if (gpu) {
        const BufferView<const std::uint8_t> from(*gpu, src, n);
        const BufferView<std::uint8_t> to(*gpu, dst, n);
        if (encrypt && tag_on_device)
          ops::encrypt(cipher, k, from, to, BufferView<std::uint8_t>(*gpu, tag_at, tag_bytes), options);
        else if (encrypt)
          ops::encrypt(cipher, k, from, to, std::span<std::uint8_t>(tag_at, tag_bytes), options);
        else
          ops::decrypt(cipher, k, from, to, host(tag, tag_bytes), options);
      } else if (encrypt) {
        ops::encrypt(cipher, k, Bytes(src, n), {dst, n}, {tag_at, tag_bytes}, options);
      } else {
        ops::decrypt(cipher, k, Bytes(src, n), {dst, n}, host(tag, tag_bytes), options);
      }
      return;
    }
    // An input on the device is given as a view there, its host span left empty.
    const auto on_device = [&](bool yes, std::uintptr_t at, std::size_t size) {
      return yes ? std::optional(
                       BufferView<const std::uint8_t>(*gpu, static_cast<const std::uint8_t*>(address(at)), size))
                 : std::nullopt;
    };
    const ops::CipherBatch b{.count = rows,
                             .message_bytes = message_bytes,
                             .keys = key_on_device ? Bytes{} : host(key, key_bytes),
                             .ivs = iv_on_device ? Bytes{} : host(iv, iv_bytes),
                             .iv_bytes = iv_bytes / rows,
                             .aad = aad_on_device ? Bytes{} : host(aad, aad_bytes),
                             .aad_offsets = aad_offsets,
                             .device_keys = on_device(key_on_device, key, key_bytes),
                             .device_ivs = on_device(iv_on_device, iv, iv_bytes),
                             .device_aad = on_device(aad_on_device, aad, aad_bytes)};
    if (gpu) {
      const BufferView<const std::uint8_t> from(*gpu, src, n);
      const BufferView<std::uint8_t> to(*gpu, dst, n);
      if (encrypt && tag_on_device)
        ops::encrypt_batch(cipher, b, from, to, BufferView<std::uint8_t>(*gpu, tag_at, tag_bytes), options);
      else if (encrypt)
        ops::encrypt_batch(cipher, b, from, to, {tag_at, tag_bytes}, options);
      else if (tag_on_device)
        ops::decrypt_batch(cipher, b, from, to, BufferView<const std::uint8_t>(*gpu, tag_at, tag_bytes), options);
      else
        ops::decrypt_batch(cipher, b, from, to, host(tag, tag_bytes), options);
    } else if (encrypt) {
      ops::encrypt_batch(cipher, b, Bytes(src, n), {dst, n}, {tag_at, tag_bytes}, options);
    } else {
      ops::decrypt_batch(cipher, b, Bytes(src, n), {dst, n}, host(tag, tag_bytes), options);
    }
  });
}

nb::dict cipher_info(const std::string& name) {
  const ops::CipherTraits& t = ops::cipher_traits(parse_cipher(name));
  nb::dict info;
  info["key_bytes"] = t.key_bytes;
  info["block_bytes"] = t.block_bytes;
  info["aead"] = t.aead;
  return info;
}

}  // namespace

void bind_cipher(nb::module_& m) {
  m.def("cipher_bulk", &bulk, "data"_a, "cipher"_a, "encrypt"_a, "key"_a, "iv"_a, "aad"_a, "tag"_a = nb::none(),
        "tag_bytes"_a = ops::aead_tag_bytes, "device"_a = nb::none(), "stream"_a = nb::none(), "chacha20_counter"_a = 0,
        "One message encrypted or decrypted where it lives: (output, new tag or b'').");
  m.def("cipher_batch", &batch, "data"_a, "cipher"_a, "encrypt"_a, "keys"_a, "ivs"_a, "tags"_a = nb::none(),
        "device"_a = nb::none(), "stream"_a = nb::none(), "chacha20_counter"_a = 0,
        "N messages of one length, each with its own key and IV: (output, new tags or b'').");
  m.def("cipher_at", &cipher_at, "cipher"_a, "encrypt"_a, "gpu"_a.none(), "data"_a, "out"_a, "batch"_a, "rows"_a,
        "message_bytes"_a, "key"_a, "key_bytes"_a, "iv"_a, "iv_bytes"_a, "aad"_a, "aad_bytes"_a, "tag"_a, "tag_bytes"_a,
        "tag_on_device"_a, "stream"_a, "chacha20_counter"_a, "key_on_device"_a = false, "iv_on_device"_a = false,
        "aad_on_device"_a = false,
        "opkit.torch's entry: rows x message_bytes bytes at `data` encrypted or decrypted into `out` (checked "
        "tensors' addresses; key, IV and AAD at host addresses unless a batch on `gpu` names them on_device; the "
        "tag too unless tag_on_device: an AEAD encryption on `gpu` then writes it to device memory without "
        "waiting, a batch decryption on `gpu` compares against it there), on `gpu` and its stream handle "
        "`stream`, or on the host CPU when gpu is None.");
  m.def("cipher_info", &cipher_info, "cipher"_a, "key_bytes, block_bytes and aead of a cipher name.");
}

}  // namespace opkit::python
