// `opkit doctor [--json] [--require-gpu] [--no-smoke]`: prints opkit::doctor::examine()'s checks,
// one line each, with the cause and the fix under any that is not ok. Exit 0 when at least one
// backend works (with --require-gpu: at least one GPU), else 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_json.hpp"
#include "commands.hpp"
#include "opkit/doctor.hpp"
#include "opkit/version.hpp"

namespace opkit::cli {
namespace {

struct DoctorOptions {
  bool json = false;
  bool require_gpu = false;
  bool no_smoke = false;
};

void run_doctor(const DoctorOptions& options, int& exit_code) {
  doctor::Report report = doctor::examine({.smoke = !options.no_smoke, .require_gpu = options.require_gpu});
  const doctor::Verdict verdict = doctor::verdict(report, options.require_gpu);
  exit_code = verdict.ready ? 0 : 1;
  if (options.json) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : report.checks) {
      nlohmann::json facts = nlohmann::json::object();
      for (const auto& [key, value] : c.facts) facts[key] = value;
      checks.push_back({{"name", c.name},
                        {"status", doctor::status_name(c.status)},
                        {"detail", c.detail},
                        {"cause", c.cause},
                        {"fix", c.fix},
                        {"facts", facts}});
    }
    nlohmann::json result = {{"opkit", version},
                             {"checks", checks},
                             {"working_gpus", report.working_gpus},
                             {"cpu_backend_works", report.cpu_backend_works},
                             {"summary", verdict.summary},
                             {"exit_code", exit_code}};
    std::printf("%s\n", json_text(result, 2).c_str());
    return;
  }
  std::fputs(doctor::render(report, verdict).c_str(), stdout);
}

}  // namespace

void add_doctor_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<DoctorOptions>();
  CLI::App* command =
      app.add_subcommand("doctor", "Check the driver, NVRTC, GPUs, kernel cache and CPU backend; say what to fix");
  command->add_flag("--json", options->json, "Print the checks as JSON");
  command->add_flag("--require-gpu", options->require_gpu, "Fail (exit 1) unless a GPU works");
  command->add_flag("--no-smoke", options->no_smoke, "Skip the compile-and-launch test on each device");
  command->callback([options, &exit_code] { run_doctor(*options, exit_code); });
}

}  // namespace opkit::cli
