// opkit::Error -> the Python exception opkit.Error (a RuntimeError), or opkit.CompileError for
// compile failures. The message is Error::what() (stage, code, kernel, options, compile log); the
// same facts are also attributes, so callers can test e.kind or print e.log on their own.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "opkit/error.hpp"
#include "opkit/ops/cipher.hpp"

namespace nb = nanobind;

namespace opkit::python {
namespace {

PyObject* error_type = nullptr;
PyObject* compile_error_type = nullptr;
PyObject* authentication_error_type = nullptr;

// Python-facing identifiers for Errc (errc_name gives prose such as "not found").
const char* kind_name(Errc kind) {
  switch (kind) {
    case Errc::unavailable:
      return "unavailable";
    case Errc::compile:
      return "compile";
    case Errc::load:
      return "load";
    case Errc::not_found:
      return "not_found";
    case Errc::invalid_argument:
      return "invalid_argument";
    case Errc::launch:
      return "launch";
    case Errc::memory:
      return "memory";
    case Errc::runtime:
      return "runtime";
    case Errc::io:
      return "io";
    case Errc::interrupted:
      return "interrupted";
  }
  return "runtime";
}

void raise_error(const Error& error, PyObject* type) {
  nb::object instance = nb::borrow(type)(error.what());
  instance.attr("kind") = kind_name(error.kind());
  instance.attr("stage") = error.stage();
  instance.attr("message") = error.message();
  instance.attr("code") = error.code();
  instance.attr("code_name") = error.code_name();
  instance.attr("kernel") = error.kernel();
  instance.attr("log") = error.log();
  instance.attr("options") = nb::cast(error.options());
  instance.attr("source_name") = error.source_name();
  if (const auto* failed = dynamic_cast<const ops::AuthenticationError*>(&error))
    instance.attr("failed_indices") = nb::cast(failed->failed_indices());
  PyErr_SetObject(type, instance.ptr());
}

void translate(const std::exception_ptr& thrown, void*) {
  try {
    std::rethrow_exception(thrown);
  } catch (const Error& error) {
    PyObject* type = error.kind() == Errc::compile ? compile_error_type : error_type;
    if (dynamic_cast<const ops::AuthenticationError*>(&error) != nullptr) type = authentication_error_type;
    try {
      raise_error(error, type);
    } catch (nb::python_error& nested) {
      nested.restore();  // building the exception failed (out of memory): raise that instead
    }
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  error_type = PyErr_NewExceptionWithDoc(
      "opkit.Error",
      "A failure reported by opkit. str(e) is the whole story; the attributes kind (\"compile\", "
      "\"not_found\", \"invalid_argument\", \"unavailable\", \"launch\", \"memory\", ...), stage, message, "
      "code, code_name, kernel, log, options and source_name hold its parts.",
      PyExc_RuntimeError, nullptr);
  if (error_type == nullptr) throw nb::python_error();
  compile_error_type = PyErr_NewExceptionWithDoc(
      "opkit.CompileError", "Kernel source failed to compile; e.log holds the compiler's log.", error_type, nullptr);
  if (compile_error_type == nullptr) throw nb::python_error();
  authentication_error_type = PyErr_NewExceptionWithDoc(
      "opkit.AuthenticationError",
      "An AEAD tag did not verify: no plaintext was released (the output is zeroed); e.failed_indices lists "
      "the failing messages of a batch ([0] for one message).",
      error_type, nullptr);
  if (authentication_error_type == nullptr) throw nb::python_error();
  m.attr("Error") = nb::handle(error_type);
  m.attr("AuthenticationError") = nb::handle(authentication_error_type);
  m.attr("CompileError") = nb::handle(compile_error_type);
  nb::register_exception_translator(&translate, nullptr);
}

}  // namespace opkit::python
