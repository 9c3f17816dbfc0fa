// See cli_options.hpp.
#include "cli_options.hpp"

#include <CLI/CLI.hpp>
#include <set>
#include <string>

namespace opkit::cli {
namespace {

std::set<const CLI::Option*>& empty_allowed() {
  static std::set<const CLI::Option*> options;  // the CLI's options live as long as main's App
  return options;
}

void reject_in(CLI::App& app) {
  for (CLI::Option* option : app.get_options([](CLI::Option*) { return true; })) {
    if (option->get_type_size() == 0 || option->get_positional() || empty_allowed().contains(option)) continue;
    const std::string name = option->get_name();
    option->check(CLI::Validator(
        [name](std::string& value) {
          return value.empty() ? name + " needs a value; an empty one was given" : std::string();
        },
        "", "NONEMPTY"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) reject_in(*sub);
}

}  // namespace

CLI::Option* allow_empty_value(CLI::Option* option) {
  empty_allowed().insert(option);
  return option;
}

void reject_empty_values(CLI::App& app) {
  reject_in(app);
}

}  // namespace opkit::cli
