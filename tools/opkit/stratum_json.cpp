// Stratum JSON -> jobs and extranonces (see stratum_json.hpp).
#include "stratum_json.hpp"

#include <cmath>

#include "cli_json.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"

namespace opkit::cli {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& where, const std::string& why) {
  throw Error(Errc::invalid_argument, "stratum job", where + " " + why);
}

// A short quote of a value for messages: a pool may send anything, of any size.
std::string quote(const json& value) {
  std::string text = json_text(value);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

const std::string& string_of(const json& value, const std::string& where) {
  if (!value.is_string()) bad(where, "must be a string, got " + quote(value));
  return value.get_ref<const std::string&>();
}

// The hex parsers name the field in their messages; the stage is this decoder's.
template <typename Parse>
auto parsed(Parse parse) {
  try {
    return parse();
  } catch (const Error& e) {
    throw Error(Errc::invalid_argument, "stratum job", e.message());  // it names `where` already
  }
}

std::uint32_t hex32_of(const json& value, const std::string& where) {
  const std::string& text = string_of(value, where);
  return parsed([&] { return ops::parse_stratum_hex32(text, where); });
}

std::vector<std::uint8_t> bytes_of(const json& value, const std::string& where) {
  const std::string& text = string_of(value, where);
  return parsed([&] { return parse_hex(text, where); });
}

template <std::size_t N>
std::array<std::uint8_t, N> fixed_of(const json& value, const std::string& where) {
  const std::string& text = string_of(value, where);
  const std::vector<std::uint8_t> raw = parsed([&] { return parse_hex(text, N, where); });
  std::array<std::uint8_t, N> out{};
  std::copy(raw.begin(), raw.end(), out.begin());
  return out;
}

// The fields in notify order, however they are looked up.
template <typename Field>
ops::StratumJob decode(Field field, bool clean_jobs_optional) {
  ops::StratumJob job;
  const auto& [id_name, id] = field(0, "job_id");
  if (id.is_number_integer() || id.is_number_unsigned()) {
    job.job_id = json_text(id);  // some pools number their jobs; mining.submit echoes the text
  } else {
    job.job_id = string_of(id, id_name);
  }
  if (job.job_id.empty()) bad(id_name, "is empty");
  const auto& [prev_name, prev] = field(1, "prevhash");
  job.prevhash = fixed_of<32>(prev, prev_name);
  const auto& [cb1_name, cb1] = field(2, "coinb1");
  job.coinb1 = bytes_of(cb1, cb1_name);
  const auto& [cb2_name, cb2] = field(3, "coinb2");
  job.coinb2 = bytes_of(cb2, cb2_name);
  const auto& [branch_name, branch] = field(4, "merkle_branch");
  if (!branch.is_array()) bad(branch_name, "must be an array of 64-digit hex strings, got " + quote(branch));
  for (std::size_t i = 0; i < branch.size(); ++i)
    job.merkle_branch.push_back(fixed_of<32>(branch[i], branch_name + "[" + std::to_string(i) + "]"));
  const auto& [version_name, version] = field(5, "version");
  job.version = hex32_of(version, version_name);
  const auto& [nbits_name, nbits] = field(6, "nbits");
  job.nbits = hex32_of(nbits, nbits_name);
  const auto& [ntime_name, ntime] = field(7, "ntime");
  job.ntime = hex32_of(ntime, ntime_name);
  const auto& [clean_name, clean] = field(8, "clean_jobs");
  if (clean.is_null() && clean_jobs_optional) {
    job.clean_jobs = false;
  } else if (clean.is_boolean()) {
    job.clean_jobs = clean.template get<bool>();
  } else {
    bad(clean_name, "must be true or false, got " + quote(clean));
  }
  return job;
}

}  // namespace

ops::StratumJob job_from_notify(const json& params) {
  if (!params.is_array() || params.size() < 9)
    bad("mining.notify params", "must be an array of 9 values, got " + quote(params));
  return decode(
      [&](std::size_t i, const char* name) {
        return std::pair<std::string, const json&>{"mining.notify params[" + std::to_string(i) + "] (" + name + ")",
                                                   params[i]};
      },
      false);
}

ops::StratumJob job_from_fields(const json& object) {
  static const json missing;  // null: reported as "missing" below
  return decode(
      [&](std::size_t, const char* name) {
        const std::string where = std::string("field '") + name + "'";
        const auto it = object.find(name);
        if (it == object.end() && std::string_view(name) != "clean_jobs") bad(where, "is missing");
        return std::pair<std::string, const json&>{where, it == object.end() ? missing : *it};
      },
      true);
}

ops::Extranonce extranonce_from(const json& extranonce1, const json& extranonce2_size, const std::string& where1,
                                const std::string& where2) {
  ops::Extranonce out;
  out.extranonce1 = bytes_of(extranonce1, where1);
  if (!extranonce2_size.is_number_integer() && !extranonce2_size.is_number_unsigned())
    bad(where2, "must be an integer 1..32, got " + quote(extranonce2_size));
  const auto size = extranonce2_size.get<long long>();
  if (size < 1 || size > 32) bad(where2, "must be 1..32 bytes, got " + std::to_string(size));
  out.extranonce2_size = static_cast<std::size_t>(size);
  return out;
}

double difficulty_from(const json& value, const std::string& where) {
  if (!value.is_number()) bad(where, "must be a number, got " + quote(value));
  const double difficulty = value.get<double>();
  if (!std::isfinite(difficulty) || !(difficulty > 0)) bad(where, "must be > 0, got " + quote(value));
  return difficulty;
}

}  // namespace opkit::cli
