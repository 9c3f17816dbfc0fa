// libFuzzer target: one line from a Stratum pool, as `opkit mine --pool` reads it (a pool may
// send anything): the JSON-RPC parser, then mining.notify's params as a job, set_difficulty's
// difficulty, mining.subscribe's extranonce, an answer's error text, and the quoted form used in
// messages. Each throws opkit::Error or returns; never anything else, never a crash.
#include <cstdint>
#include <string_view>

#include "opkit/error.hpp"
#include "stratum_json.hpp"
#include "stratum_rpc.hpp"

namespace {

template <typename F>
void expect_opkit_error_or_value(F&& f) {
  try {
    f();
  } catch (const opkit::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace opkit::cli;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  (void)quoted_line(line);
  expect_opkit_error_or_value([&] {
    const RpcMessage m = parse_rpc_line(line);
    if (m.is_answer()) {
      (void)rpc_error_text(m.error);
      if (m.result.is_array() && m.result.size() >= 3)
        expect_opkit_error_or_value([&] { (void)extranonce_from(m.result[1], m.result[2], "result[1]", "result[2]"); });
      return;
    }
    expect_opkit_error_or_value([&] { (void)job_from_notify(m.params); });
    expect_opkit_error_or_value([&] { (void)job_from_fields(m.params); });
    if (m.params.is_array() && !m.params.empty())
      expect_opkit_error_or_value([&] { (void)difficulty_from(m.params[0], "params[0]"); });
  });
  return 0;
}
