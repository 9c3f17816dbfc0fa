// `opkit mine --pool stratum+tcp://HOST:PORT`: the network half of the pool miner. It keeps a
// session with the pool (reconnecting with backoff when it drops), turns the pool's jobs into
// work for the search thread (pool_miner.hpp), submits the shares found unless they went stale,
// counts the pool's answers, and stops on --shares, --seconds or a signal (docs/stratum.md).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include "cli_json.hpp"
#include "cli_stop_signals.hpp"
#include "mine_events.hpp"
#include "mine_report.hpp"
#include "mine_stratum.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "pool_miner.hpp"
#include "stratum_session.hpp"

namespace opkit::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Everything the network half tracks across connections.
class PoolClient {
 public:
  PoolClient(const PoolLogin& login, const StratumRun& run, ops::MineOptions options)
      : login_(login),
        run_(run),
        pool_(parse_pool_url(login.url)),
        events_(run.json, !run.quiet && isatty(STDERR_FILENO)),
        miner_(run, std::move(options)) {}

  int run() {
    int attempt = 0;
    bool ever_connected = false;
    std::string reason;
    while (!stop_reason()) {
      std::unique_ptr<StratumSession> session;
      try {
        session = std::make_unique<StratumSession>(pool_, run_.worker, login_.password, login_.timeout_seconds,
                                                   session_calls());
      } catch (const Error& e) {
        if (e.kind() != Errc::unavailable || !ever_connected) throw;  // an unreachable pool: exit 3 at once
        reason = e.message();
      }
      if (session) {
        const bool worked = serve(*session, ever_connected);
        if (worked) attempt = 0;
        reason = session->closed_reason();
        if (stop_reason()) break;
        if (!ever_connected)
          throw Error(Errc::unavailable, "pool " + pool_.text(),
                      "the connection ended before the pool answered mining.subscribe and mining.authorize: " + reason);
      }
      miner_.clear_work();
      ++epoch_;  // shares of the old connection's extranonce1 cannot be submitted on a new one
      pending_.clear();
      if (++attempt > login_.retries)
        throw Error(Errc::unavailable, "pool " + pool_.text(),
                    "gave up after " + std::to_string(login_.retries) + " reconnect attempts: " + reason);
      const double wait = std::min(30.0, 0.5 * static_cast<double>(1u << std::min(attempt - 1, 6)));
      events_.status("disconnected", {{"pool", pool_.text()}, {"reason", reason}, {"retry_in", wait}},
                     "lost the pool (" + reason + "); reconnecting in " + std::to_string(wait).substr(0, 4) + " s");
      for (const auto until = Clock::now() + std::chrono::duration<double>(wait); Clock::now() < until;) {
        if (stop_reason()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    return finish();
  }

 private:
  // One connection, until it drops (false if it never finished the handshake) or a stop.
  bool serve(StratumSession& session, bool& ever_connected) {
    auto drawn = Clock::now();
    while (!stop_reason()) {
      if (const std::exception_ptr failure = miner_.failure()) std::rethrow_exception(failure);
      if (!session.pump(0.05)) return session.ready();
      if (!session.ready()) continue;  // the session times out an unanswered handshake itself
      ever_connected = true;
      for (PoolShare& found : miner_.take_shares()) submit(session, found);
      if (seconds_since(drawn) > 0.5) {
        drawn = Clock::now();
        events_.status_line(status_text());
      }
    }
    return session.ready();
  }

  SessionCalls session_calls() {
    return {
        .ready =
            [this] {
              events_.status("connected", {{"pool", pool_.text()}, {"worker", run_.worker}},
                             "connected to " + pool_.text() + " as " + run_.worker);
            },
        .difficulty =
            [this](double d) {
              next_difficulty_ = d;  // for the jobs that follow, as the protocol says
              events_.status("difficulty", {{"difficulty", d}, {"share_target", ops::share_target(d).hex()}},
                             "difficulty " + number_text(d) + " from the next job on");
            },
        .job = [this](const ops::StratumJob& job, const ops::Extranonce& extranonce) { take_job(job, extranonce); },
        .answer = [this](std::uint64_t id, bool accepted, const std::string& why) { take_answer(id, accepted, why); },
        .note =
            [this](const std::string& event, const std::string& text) {
              events_.status(event, {{"text", text}}, text);
            }};
  }

  void take_job(const ops::StratumJob& job, const ops::Extranonce& extranonce) {
    auto work = std::make_shared<PoolWork>();
    work->job = job;
    work->extranonce = extranonce;
    work->difficulty = next_difficulty_;
    work->share_target = ops::share_target(next_difficulty_);
    // A clean job makes the shares of every earlier job stale; the first job of a connection
    // replaces the last connection's work.
    const bool restart = job.clean_jobs || !has_job_;
    if (job.clean_jobs) ++epoch_;
    work->epoch = epoch_;
    has_job_ = true;
    job_id_ = job.job_id;
    events_.status(
        "job",
        {{"job_id", job.job_id},
         {"clean_jobs", job.clean_jobs},
         {"difficulty", next_difficulty_},
         {"extranonce1", to_hex(extranonce.extranonce1)},
         {"extranonce2_size", extranonce.extranonce2_size}},
        "job " + job.job_id + (job.clean_jobs ? " (clean)" : "") + ", difficulty " + number_text(next_difficulty_));
    miner_.set_work(std::move(work), restart);
  }

  void submit(StratumSession& session, const PoolShare& found) {
    if (found.epoch != epoch_) {
      ++stale_;
      events_.share(found.share, {{"status", "stale"}});
      return;
    }
    const std::optional<std::uint64_t> id = session.submit(found.share);
    events_.share(found.share, {{"status", id ? "submitted" : "unsent"}, {"id", id ? nlohmann::json(*id) : nullptr}});
    if (id) pending_[*id] = found.share;
  }

  void take_answer(std::uint64_t id, bool accepted, const std::string& why) {
    const auto it = pending_.find(id);
    if (it == pending_.end()) return;
    const FoundShare share = it->second;
    pending_.erase(it);
    nlohmann::json fields = {{"id", id},
                             {"job_id", share.job_id},
                             {"extranonce2", share.extranonce2},
                             {"ntime", share.ntime},
                             {"nonce", share.nonce}};
    if (accepted) {
      ++accepted_;
      events_.status("accepted", fields, "accepted share " + share.nonce + " of job " + share.job_id);
    } else {
      ++rejected_;
      fields["reason"] = why;
      events_.status("rejected", fields, "rejected share " + share.nonce + " of job " + share.job_id + ": " + why);
    }
  }

  // Why to stop now, if at all.
  const char* stop_reason() {
    if (signals_.requested()) return "interrupted";
    if (run_.max_shares && accepted_ >= *run_.max_shares) return "shares";
    if (run_.max_seconds && seconds_since(started_) >= *run_.max_seconds) return "seconds";
    return nullptr;
  }

  std::string status_text() const {
    const double s = seconds_since(started_);
    return "pool " + pool_.text() + "  job " + job_id_ + "  diff " + number_text(next_difficulty_) + "  accepted " +
           std::to_string(accepted_) + "  rejected " + std::to_string(rejected_) + "  stale " + std::to_string(stale_) +
           "  " + rate_text(s > 0 ? static_cast<double>(miner_.hashes()) / s : 0);
  }

  static std::string number_text(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
  }

  int finish() {
    const char* why = stop_reason();
    miner_.halt();
    events_.clear_status_line();
    const double s = seconds_since(started_);
    const std::uint64_t hashes = miner_.hashes();
    const nlohmann::json at = miner_.position();
    events_.status("stopped",
                   {{"reason", why},
                    {"accepted", accepted_},
                    {"rejected", rejected_},
                    {"stale", stale_},
                    {"unanswered", pending_.size()},
                    {"hashes", hashes},
                    {"seconds", s},
                    {"hashrate", s > 0 ? static_cast<double>(hashes) / s : 0},
                    {"stopped_at", at}},
                   "");
    std::string where = "no header searched yet";
    if (!at.is_null())
      where = "last job " + at["job_id"].get<std::string>() + ", extranonce2 " + at["extranonce2"].get<std::string>() +
              ", ntime " + at["ntime"].get<std::string>() +
              (at["searched_through"].is_null() ? std::string(", no nonce searched")
                                                : ", nonces searched through " + json_text(at["searched_through"]));
    if (!run_.json || std::string(why) == "interrupted")
      std::fprintf(
          stderr, "opkit mine: %s after %.1f s: %llu accepted, %llu rejected, %llu stale, %zu unanswered, %s; %s\n",
          std::string(why) == "interrupted" ? "interrupted" : "stopped", s, static_cast<unsigned long long>(accepted_),
          static_cast<unsigned long long>(rejected_), static_cast<unsigned long long>(stale_), pending_.size(),
          rate_text(s > 0 ? hashes / s : 0).c_str(), where.c_str());
    return std::string(why) == "interrupted" ? 130 : 0;
  }

  const PoolLogin login_;
  const StratumRun run_;
  const PoolAddress pool_;
  StopSignals signals_;
  MiningEvents events_;
  const Clock::time_point started_ = Clock::now();
  double next_difficulty_ = 1;  // until the pool says otherwise
  std::uint64_t epoch_ = 0;
  bool has_job_ = false;
  std::string job_id_ = "-";
  std::map<std::uint64_t, FoundShare> pending_;  // submitted, unanswered, by request id
  std::uint64_t accepted_ = 0, rejected_ = 0, stale_ = 0;
  PoolMiner miner_;  // last: its thread stops before the rest goes
};

}  // namespace

int run_mine_pool(const PoolLogin& login, const StratumRun& run, ops::MineOptions options) {
  return PoolClient(login, run, std::move(options)).run();
}

}  // namespace opkit::cli
