// opkit.doctor(): the checks behind `opkit doctor`, run inside the Python process, so that what
// the caller's own imports brought in (a second C++ runtime from PyTorch, another CUDA) shows.
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "opkit/doctor.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace opkit::python {

void bind_doctor(nb::module_& m) {
  m.def(
      "doctor",
      [](bool smoke, bool require_gpu) {
        doctor::Report report;
        {
          nb::gil_scoped_release unlocked;  // the smoke tests compile and launch kernels
          report = doctor::examine({.smoke = smoke, .require_gpu = require_gpu});
        }
        nb::list checks;
        for (const doctor::Check& c : report.checks) {
          nb::dict facts;
          for (const auto& [key, value] : c.facts) facts[key.c_str()] = value;
          nb::dict check;
          check["name"] = c.name;
          check["status"] = doctor::status_name(c.status);
          check["detail"] = c.detail;
          check["cause"] = c.cause;
          check["fix"] = c.fix;
          check["facts"] = facts;
          checks.append(check);
        }
        const doctor::Verdict verdict = doctor::verdict(report, require_gpu);
        nb::dict out;
        out["checks"] = checks;
        out["working_gpus"] = report.working_gpus;
        out["cpu_backend_works"] = report.cpu_backend_works;
        out["ready"] = verdict.ready;
        out["summary"] = verdict.summary;
        out["text"] = doctor::render(report, verdict);
        return out;
      },
      "smoke"_a = true, "require_gpu"_a = false,
      "Runs opkit doctor's checks in this process: {'checks': [{name, status, detail, cause, fix, facts}], "
      "'working_gpus', 'cpu_backend_works', 'ready', 'summary', 'text' (as `opkit doctor` prints it)}.");
}

}  // namespace opkit::python
