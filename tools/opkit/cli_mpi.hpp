// `opkit mine` and `opkit hash --lines` under mpirun (docs/scale-out.md): the hooks cmd_mine.cpp
// and cmd_hash.cpp call when an MPI launcher started the process. Rank 0 prints exactly what a
// single process prints; a rank that fails prints its error and ends the whole job (MPI_Abort).
#pragma once

#include <string>
#include <vector>

#include "hash_lines.hpp"
#include "mine_report.hpp"
#include "opkit/ops/pow.hpp"

namespace opkit::cli {

// Whether an MPI launcher started this process; MPI is then initialized (and finalized at exit).
// Throws Error(unavailable) under a launcher when this opkit was built without MPI, rather than
// letting every rank run the whole job on its own.
bool under_mpi();

struct MineOutput {
  ops::NonceRange range;
  bool json = false;
  bool quiet = false;
};

// `opkit mine` over all ranks (opkit::mpi::mine); returns the exit status a single process would
// (0 found, 1 not found, 130 stopped by SIGINT, SIGTERM or SIGUSR1 on any rank).
int mine_over_ranks(const ops::BitcoinJob& job, ops::MineOptions options, const MineOutput& output);
int mine_over_ranks(const ops::DataJob& job, ops::MineOptions options, const MineOutput& output);

// `opkit hash --lines` over all ranks (opkit::mpi::BatchHasher): rank 0 reads the inputs in
// batches and writes the digests in input order; returns 0, or 1 on rank 0 when an input could
// not be read.
int hash_lines_over_ranks(const std::vector<std::string>& inputs, const LinesOptions& options);

// For the hooks' catch blocks: prints the exception in flight, naming the rank, then ends the
// whole job with the exit status a single process would have had.
[[noreturn]] void fail_rank() noexcept;

}  // namespace opkit::cli
