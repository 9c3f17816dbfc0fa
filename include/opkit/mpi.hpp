// Scale-out over MPI ranks (`mpirun -np N opkit ...`): one mining range or one stream of
// messages spread over every rank of MPI_COMM_WORLD, each rank on its share of its node's GPUs
// or cores. mpi.h stays out of this header. launched_by_mpi(), node_share() and
// node_share_of_cores() are always in `opkit`; the rest only in builds with MPI (OPKIT_WITH_MPI,
// library target opkit_mpi, opkit::mpi).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "opkit/device.hpp"
#include "opkit/ops/pow.hpp"
#include "opkit/ops/sha256.hpp"

namespace opkit::mpi {

// Whether an MPI launcher started this process: OMPI_COMM_WORLD_SIZE (OpenMPI), PMIX_RANK
// (PMIx: OpenMPI, Slurm) or PMI_SIZE (MPICH, Slurm PMI2) is set. Plain runs never touch MPI.
bool launched_by_mpi() noexcept;

// Where this process sits: its rank in MPI_COMM_WORLD and on its node (ranks sharing memory).
struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string host;
};

// Initializes MPI once (thread level "funneled": only the calling thread talks MPI) and
// finalizes it at exit; later calls return the same World. Throws Error(unavailable) if MPI
// fails to start.
const World& init();

// Ends the whole job with this exit status (MPI_Abort). For a rank that failed while the others
// may be waiting for it in a collective call.
[[noreturn]] void abort(int exit_status) noexcept;

// This rank's share of its node's devices: with at least as many devices as ranks on the node,
// every local_size-th device from local_rank on; with fewer, the one at local_rank % count.
std::vector<Device> node_share(const std::vector<Device>& devices, const World& world);
// The same as indices into a list of `count` devices.
std::vector<std::size_t> node_share(std::size_t count, const World& world);
// This rank's share of its node's cores: cores / local_size, at least 1.
int node_share_of_cores(int cores, const World& world);

// ---- Mining over all ranks (collective: every rank calls it with the same job). ----
//
// The range is searched in rounds: in each, the ranks take consecutive chunks in rank order, each
// sized to about `round_seconds` of that rank's measured rate; after each round one
// MPI_Allgather shares finds, progress, stop flags and the next sizes. The first round with a find
// gives the answer, which is therefore the lowest qualifying nonce, the same as ops::mine's.
//
// `options` is per rank and describes the node: its devices (empty: every CUDA GPU, else the
// CPU) are shared among the node's ranks with node_share(), and cpu_threads 0 means this rank's
// node_share_of_cores(). options.stop set on any rank stops every rank at the end of the round
// (the search itself stops within a launch). options.progress runs on rank 0 after each round
// with the totals of all ranks.
//
// Every rank returns the same result: hashes summed over the ranks, seconds of the slowest,
// engines as "rank R on HOST: ENGINE". On an exception the other ranks may wait forever in the
// round's collective call: print the error and call abort().
ops::MineResult mine(const ops::BitcoinJob& job, const ops::MineOptions& options, double round_seconds = 0.5);
ops::MineResult mine(const ops::DataJob& job, const ops::MineOptions& options, double round_seconds = 0.5);

// ---- SHA-256 batches over all ranks (collective). ----
//
// Rank 0 calls hash() for each batch (messages given as for ops::sha256 with offsets) and
// finish() once at the end; every other rank calls serve(), which returns after rank 0's
// finish(). Each batch is split into one run of whole messages per rank (balanced by bytes),
// sent with MPI_Scatterv; each rank hashes its run where `where` says (a GPU is taken from the
// node's share; on the host CPU, OpenMP threads are set to the rank's share of the cores unless
// OMP_NUM_THREADS is set), and rank 0 gathers the digests in message order. A batch's bytes must
// stay under 2 GiB (MPI counts and displacements are int).
class BatchHasher {
 public:
  BatchHasher(ops::HashAlgo algo, ops::HashOptions where);
  BatchHasher(const BatchHasher&) = delete;
  BatchHasher& operator=(const BatchHasher&) = delete;

  void hash(std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets,
            std::span<std::uint8_t> digests);
  void finish();
  void serve();

  const ops::HashOptions& where() const noexcept { return where_; }

 private:
  void hash_run(std::span<const std::uint8_t> data, std::span<const std::uint64_t> offsets,
                std::span<std::uint8_t> digests) const;

  ops::HashAlgo algo_;
  ops::HashOptions where_;
  World world_;
  bool finished_ = false;
};

}  // namespace opkit::mpi
