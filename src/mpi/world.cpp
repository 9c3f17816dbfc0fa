// MPI start-up and shutdown: initialized once, on first use, and finalized when the process
// exits normally; rank, size, and the ranks sharing this node (MPI_COMM_TYPE_SHARED).
#include <mpi.h>

#include <cstdlib>

#include "opkit/error.hpp"
#include "opkit/mpi.hpp"

namespace opkit::mpi {
namespace {

extern "C" void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

World start() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw Error(Errc::unavailable, "MPI_Init_thread", "MPI failed to start");
    std::atexit(finalize_at_exit);
  }
  World world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &world.local_rank);
  MPI_Comm_size(node, &world.local_size);
  MPI_Comm_free(&node);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  world.host.assign(host, static_cast<std::size_t>(length));
  return world;
}

}  // namespace

const World& init() {
  static const World world = start();
  return world;
}

void abort(int exit_status) noexcept {
  MPI_Abort(MPI_COMM_WORLD, exit_status);
  std::_Exit(exit_status);  // MPI_Abort does not return in practice; the standard does not promise it
}

}  // namespace opkit::mpi
