// Option rules shared by every subcommand. An option given with an empty value (`--start ''`,
// `--device=`) is a usage error, not "not given": silently reading it as the default searched
// from nonce 0 once. The few options for which the empty string is a real value say so.
#pragma once

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace opkit::cli {

// Marks an option whose empty value is meaningful (`opkit mine --data ''` mines the empty string).
CLI::Option* allow_empty_value(CLI::Option* option);

// Makes every value-taking option of every subcommand of `app` reject the empty string, except
// those marked with allow_empty_value. Call after all commands are registered.
void reject_empty_values(CLI::App& app);

}  // namespace opkit::cli
