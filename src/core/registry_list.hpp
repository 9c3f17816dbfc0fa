// The registry's backends in order, for the library's own iteration (Device::all, best).
#pragma once

#include <memory>
#include <vector>

#include "opkit/backend.hpp"

namespace opkit::detail {

std::vector<std::shared_ptr<backend::Backend>> registered_backends();

}  // namespace opkit::detail
