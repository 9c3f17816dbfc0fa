// Job files for `opkit mine --job` (see mine_job_file.hpp).
#include "mine_job_file.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>
#include <vector>

#include "cli_input_file.hpp"
#include "opkit/error.hpp"
#include "stratum_json.hpp"

namespace opkit::cli {
namespace {

// A job is a few KiB (coinb1/coinb2 and a branch of at most ~12 hashes); a bigger file is a mistake.
constexpr std::size_t max_job_file_bytes = std::size_t{1} << 20;

std::string read_bounded(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(Errc::invalid_argument, "opkit mine --job", path + " is a directory, not a job file");
  InputFile in(path);
  std::vector<std::uint8_t> data(max_job_file_bytes + 1);
  const std::size_t n = in.read_full(data);
  if (n > max_job_file_bytes)
    throw Error(Errc::invalid_argument, "opkit mine --job", path + " is larger than 1 MiB: not a job file");
  return {data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n)};
}

JobFile decode(const nlohmann::json& file) {
  if (!file.is_object()) throw Error(Errc::invalid_argument, "stratum job", "the file must hold one JSON object");
  JobFile out;
  out.job = job_from_fields(file);
  static const nlohmann::json missing;
  const auto field = [&](const char* name) -> const nlohmann::json& {
    const auto it = file.find(name);
    return it == file.end() ? missing : *it;
  };
  for (const char* name : {"extranonce1", "extranonce2_size"})
    if (field(name).is_null())
      throw Error(Errc::invalid_argument, "stratum job", std::string("field '") + name + "' is missing");
  out.extranonce = extranonce_from(field("extranonce1"), field("extranonce2_size"), "field 'extranonce1'",
                                   "field 'extranonce2_size'");
  const nlohmann::json& difficulty = field("difficulty");
  const nlohmann::json& target = field("share_target");
  if (difficulty.is_null() == target.is_null())
    throw Error(Errc::invalid_argument, "stratum job",
                "give exactly one of the fields 'difficulty' (the pool's mining.set_difficulty) and 'share_target' "
                "(64 hex digits)");
  if (!difficulty.is_null()) {
    out.difficulty = difficulty_from(difficulty, "field 'difficulty'");
    out.share_target = ops::share_target(*out.difficulty);
  } else {
    if (!target.is_string())
      throw Error(Errc::invalid_argument, "stratum job", "field 'share_target' must be a string of 64 hex digits");
    try {
      out.share_target = ops::Target::from_hex(target.get<std::string>());
    } catch (const Error& e) {
      throw Error(Errc::invalid_argument, "stratum job", "field 'share_target' is not valid: " + e.message());
    }
  }
  const nlohmann::json& roll = field("ntime_roll");
  if (!roll.is_null()) {
    if (!roll.is_number_unsigned() && !roll.is_number_integer())
      throw Error(Errc::invalid_argument, "stratum job", "field 'ntime_roll' must be a number of seconds");
    const auto seconds = roll.get<long long>();
    if (seconds < 0 || seconds > 7200)
      throw Error(Errc::invalid_argument, "stratum job",
                  "field 'ntime_roll' must be 0..7200 seconds (pools reject an ntime over two hours ahead)");
    out.ntime_roll = static_cast<std::uint32_t>(seconds);
  }
  return out;
}

}  // namespace

JobFile read_job_file(const std::string& path) {
  const std::string text = read_bounded(path);
  nlohmann::json file;
  try {
    file = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range: a number past a double
    throw Error(Errc::invalid_argument, "opkit mine --job", path + " is not JSON: " + e.what());
  }
  try {
    return decode(file);
  } catch (const Error& e) {
    if (e.kind() != Errc::invalid_argument) throw;
    throw Error(Errc::invalid_argument, "opkit mine --job " + path, e.message());
  }
}

}  // namespace opkit::cli
