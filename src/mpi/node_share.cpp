// Which of a node's devices and cores belong to this rank when several ranks share the node.
#include <algorithm>

#include "opkit/error.hpp"
#include "opkit/mpi.hpp"

namespace opkit::mpi {

std::vector<std::size_t> node_share(std::size_t count, const World& world) {
  if (world.local_size < 1 || world.local_rank < 0 || world.local_rank >= world.local_size)
    throw Error(Errc::invalid_argument, "mpi node_share",
                "local rank " + std::to_string(world.local_rank) + " of " + std::to_string(world.local_size));
  const auto ranks = static_cast<std::size_t>(world.local_size);
  const auto me = static_cast<std::size_t>(world.local_rank);
  std::vector<std::size_t> share;
  if (count == 0) return share;
  if (count < ranks) {
    // More ranks than devices: ranks take turns, so some devices serve two ranks or more.
    share.push_back(me % count);
    return share;
  }
  for (std::size_t i = me; i < count; i += ranks) share.push_back(i);
  return share;
}

std::vector<Device> node_share(const std::vector<Device>& devices, const World& world) {
  std::vector<Device> share;
  for (std::size_t i : node_share(devices.size(), world)) share.push_back(devices[i]);
  return share;
}

int node_share_of_cores(int cores, const World& world) {
  return std::max(1, cores / std::max(1, world.local_size));
}

}  // namespace opkit::mpi
