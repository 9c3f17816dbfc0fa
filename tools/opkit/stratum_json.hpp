// Stratum's JSON values decoded into opkit::ops types, each error naming the field: a job file's
// named fields (`opkit mine --job`) and a pool's mining.notify params are one decoder.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "opkit/ops/stratum.hpp"

namespace opkit::cli {

// mining.notify's params: [job_id, prevhash, coinb1, coinb2, merkle_branch, version, nbits, ntime,
// clean_jobs]. Throws Error(invalid_argument) saying which param is wrong and how.
ops::StratumJob job_from_notify(const nlohmann::json& params);

// The same fields by name, in an object: "job_id", "prevhash", "coinb1", "coinb2",
// "merkle_branch", "version", "nbits", "ntime", "clean_jobs" (optional, default false).
ops::StratumJob job_from_fields(const nlohmann::json& object);

// mining.subscribe's extranonce1 (hex) and extranonce2_size (an integer 1..32), wherever they come
// from; `where` names them in errors ("extranonce1", "mining.subscribe result[1]").
ops::Extranonce extranonce_from(const nlohmann::json& extranonce1, const nlohmann::json& extranonce2_size,
                                const std::string& where1, const std::string& where2);

// A positive, finite pool difficulty (mining.set_difficulty's param, a job file's "difficulty").
double difficulty_from(const nlohmann::json& value, const std::string& where);

}  // namespace opkit::cli
