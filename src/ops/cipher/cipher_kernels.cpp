// The cipher kernel set: which program each CipherProgram names, for every CUDA C++ backend.
#include "cipher_kernels.hpp"

#include "aes_kernels.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/cipher.hpp"
#include "opkit_embedded.hpp"

namespace opkit::ops {
namespace detail {

std::string cipher_source(const std::string& file) {
  std::string_view text = opkit::detail::embedded_source(("cipher/" + file).c_str());
  if (text.empty()) throw Error(Errc::not_found, "cipher", "kernel source cipher/" + file + " is not embedded");
  return std::string(text);
}

const KernelSet<CipherProgram>& cipher_kernel_set() {
  // Never destroyed: its kernels keep modules loaded, which must not be unloaded during exit.
  static const auto* set = [] {
    auto* s = new KernelSet<CipherProgram>("cipher");
    s->add_language("cuda", {[](const CipherProgram& p) {
                               switch (p.source) {
                                 case CipherProgram::Source::chacha20_bulk:
                                   return chacha20_bulk_program(p.aligned, p.decrypt);
                                 case CipherProgram::Source::chacha20_batch:
                                   return chacha20_batch_program(p.aead, p.aligned, p.decrypt);
                                 case CipherProgram::Source::secret_store:
                                   return Program(cipher_source("secret_store.cu")).name("secret_store.cu");
                                 case CipherProgram::Source::batch_iv_check:
                                   return Program(cipher_source("batch_iv_check.cu")).name("batch_iv_check.cu");
                                 case CipherProgram::Source::aes:
                                   break;
                               }
                               return aes::aes_program();
                             },
                             {.block = 256}});
    return s;
  }();
  return *set;
}

}  // namespace detail

const KernelSupport& cipher_support() {
  return detail::cipher_kernel_set();
}

}  // namespace opkit::ops
