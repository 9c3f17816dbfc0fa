// The MPI hooks of `opkit mine` (see cli_mpi.hpp): launcher detection, stop signals, rank 0's
// report, and how a failing rank ends the job. `opkit hash --lines` over ranks: cli_mpi_lines.cpp.
#include "cli_mpi.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "cli_stop_signals.hpp"
#include "opkit/error.hpp"
#include "opkit/mpi.hpp"

namespace opkit::cli {
namespace {

// As main.cpp maps errors to exit statuses.
int exit_status_for(Errc kind) {
  switch (kind) {
    case Errc::invalid_argument:
    case Errc::not_found:
      return 2;
    case Errc::compile:
      return 1;
    case Errc::interrupted:
      return 130;
    default:
      return 3;
  }
}

#ifdef OPKIT_WITH_MPI

template <class Job>
int mine_job(const Job& job, ops::MineOptions options, const MineOutput& output) {
  try {
    const mpi::World& world = mpi::init();
    StopSignals stop(/*with_usr1=*/true);  // see cli_stop_signals.hpp for why each signal
    options.stop = &stop.flag();
    const bool progress = world.rank == 0 && !output.quiet && isatty(STDERR_FILENO);
    if (progress) options.progress = terminal_progress();
    const ops::MineResult result = mpi::mine(job, options);
    if (progress) clear_progress();
    if (world.rank == 0) print_result(result, output.range, output.json);
    std::fflush(stdout);
    return result.found ? 0 : (result.interrupted ? 130 : 1);
  } catch (...) {
    fail_rank();
  }
}

#else

[[noreturn]] void no_mpi() {
  throw Error(Errc::unavailable, "opkit under mpirun",
              "this opkit was built without MPI (no MPI found at build time, or OPKIT_WITH_MPI=OFF); rebuild "
              "with libopenmpi-dev installed, or run it without mpirun");
}

#endif

}  // namespace

#ifdef OPKIT_WITH_MPI

bool under_mpi() {
  if (!mpi::launched_by_mpi()) return false;
  mpi::init();
  return true;
}

int mine_over_ranks(const ops::BitcoinJob& job, ops::MineOptions options, const MineOutput& output) {
  return mine_job(job, std::move(options), output);
}

int mine_over_ranks(const ops::DataJob& job, ops::MineOptions options, const MineOutput& output) {
  return mine_job(job, std::move(options), output);
}

#else  // Built without MPI: refuse to run under a launcher, where each rank would do the whole job.

bool under_mpi() {
  if (mpi::launched_by_mpi()) no_mpi();
  return false;
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): the MPI build's signature, which moves its copy on
int mine_over_ranks(const ops::BitcoinJob&, ops::MineOptions, const MineOutput&) {
  no_mpi();
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): the MPI build's signature, which moves its copy on
int mine_over_ranks(const ops::DataJob&, ops::MineOptions, const MineOutput&) {
  no_mpi();
}

#endif

void fail_rank() noexcept {
  int status = 3;
  std::string what = "opkit: unknown error";
  try {
    throw;
  } catch (const Error& e) {
    status = exit_status_for(e.kind());
    what = e.what();
  } catch (const std::exception& e) {
    what = std::string("opkit: ") + e.what();
  } catch (...) {
  }
  std::fflush(stdout);
#ifdef OPKIT_WITH_MPI
  const mpi::World& world = mpi::init();
  std::fprintf(stderr, "%s\n  on rank %d of %d (%s); ending the job\n", what.c_str(), world.rank, world.size,
               world.host.c_str());
  std::fflush(stderr);
  mpi::abort(status);
#else
  std::fprintf(stderr, "%s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(status);
#endif
}

}  // namespace opkit::cli
