// opkit::doctor: what works on this machine and, for what does not, the cause and the fix. The
// checks behind `opkit doctor`, as structured results that the CLI and Python both print.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace opkit::doctor {

enum class Status { ok, warn, fail, skip };
const char* status_name(Status status) noexcept;  // "ok", "warn", "fail", "skip"

struct Check {
  std::string name;  // short and stable: "driver", "nvrtc", "gpu0", "smoke cuda:0", "cache", ...
  Status status = Status::ok;
  std::string detail;                                      // one line: what was found
  std::string cause;                                       // on warn/fail: why it is a problem
  std::string fix;                                         // on warn/fail: what to do
  std::vector<std::pair<std::string, std::string>> facts;  // machine-readable findings (path, version, ...)
};

struct Report {
  std::vector<Check> checks;
  int working_gpus = 0;  // GPUs that passed the smoke test
  bool cpu_backend_works = false;
  bool any_backend_works() const { return working_gpus > 0 || cpu_backend_works; }
};

struct Options {
  // Compile and launch a small kernel on every device (the only slow part: about a second).
  bool smoke = true;
  // A missing GPU is a failure instead of a skipped check.
  bool require_gpu = false;
};

// Runs every check. Never throws for what it finds (that is what the report is for).
Report examine(const Options& options = {});

// Whether the machine is ready (a backend runs kernels; with require_gpu, a GPU does) and the
// one-line summary that says so: "1 GPU works, the CPU backend works".
struct Verdict {
  bool ready = false;
  std::string summary;
};
Verdict verdict(const Report& report, bool require_gpu);

// The report as `opkit doctor` prints it: a header, one line per check with its cause and fix
// under it, and "ready: ..." or "not ready: ..." last. The CLI and opkit.doctor() both print this.
std::string render(const Report& report, const Verdict& verdict);

}  // namespace opkit::doctor
