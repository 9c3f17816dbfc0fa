// Which of a node's devices and cores belong to this rank when several ranks share the node.
#include <algorithm>

#include "opkit/error.hpp"
#include "opkit/mpi.hpp"

namespace opkit::mpi {

std::vector<Device> node_share(const std::vector<Device>& devices, const World& world) {
  if (world.local_size < 1 || world.local_rank < 0 || world.local_rank >= world.local_size)
    throw Error(Errc::invalid_argument, "mpi node_share",
                "local rank " + std::to_string(world.local_rank) + " of " + std::to_string(world.local_size));
  std::vector<Device> share;
  if (devices.empty()) return share;
  const auto count = static_cast<int>(devices.size());
  if (count < world.local_size) {
    // More ranks than devices: ranks take turns, so some devices serve two ranks.
    share.push_back(devices[static_cast<std::size_t>(world.local_rank % count)]);
    return share;
  }
  for (int i = world.local_rank; i < count; i += world.local_size)
    share.push_back(devices[static_cast<std::size_t>(i)]);
  return share;
}

int node_share_of_cores(int cores, const World& world) {
  return std::max(1, cores / std::max(1, world.local_size));
}

}  // namespace opkit::mpi
