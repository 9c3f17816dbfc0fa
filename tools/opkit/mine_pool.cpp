#include "mine_stratum.hpp"
#include "opkit/error.hpp"
namespace opkit::cli {
int run_mine_pool(const PoolLogin&, const StratumRun&, ops::MineOptions) { throw Error(Errc::unavailable, "pool", "todo"); }
}
