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

}  // namespace opkit::mpi
