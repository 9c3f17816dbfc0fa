// Umbrella header: the whole public API of opkit's runtime kernel toolkit.
#pragma once

#include "opkit/buffer.hpp"
#include "opkit/cache.hpp"
#include "opkit/device.hpp"
#include "opkit/error.hpp"
#include "opkit/hex.hpp"
#include "opkit/interrupt.hpp"
#include "opkit/kernel.hpp"
#include "opkit/kernel_set.hpp"
#include "opkit/module.hpp"
#include "opkit/nvrtc.hpp"
#include "opkit/program.hpp"
#include "opkit/registry.hpp"
#include "opkit/sha256_hasher.hpp"
#include "opkit/stream.hpp"
#include "opkit/target.hpp"
#include "opkit/version.hpp"
