// Whether an MPI launcher started this process, from the variables each launcher sets for its
// ranks; a plain run has none of them and never initializes MPI.
#include <cstdlib>

#include "opkit/mpi.hpp"

namespace opkit::mpi {

bool launched_by_mpi() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

int launcher_rank() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* value = std::getenv(name); value != nullptr) return std::atoi(value);
  return 0;
}

}  // namespace opkit::mpi
