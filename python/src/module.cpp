// Entry point of the extension opkit._opkit. The public Python API lives in python/opkit; this
// module is the thin typed layer it calls.
#include "bindings.hpp"

#include "opkit/version.hpp"

NB_MODULE(_opkit, m) {
  m.doc() = "opkit's C++ core (use the opkit package, not this module)";
  m.attr("version") = opkit::version;
  opkit::python::bind_errors(m);
  opkit::python::bind_device(m);
  opkit::python::bind_memory(m);
  opkit::python::bind_program(m);
  opkit::python::bind_dlpack(m);
  opkit::python::bind_sha256(m);
  opkit::python::bind_cipher(m);
  opkit::python::bind_mine(m);
  opkit::python::bind_doctor(m);
  opkit::python::bind_lz4(m);
}
