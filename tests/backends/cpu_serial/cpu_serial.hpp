// A test-only backend, "cpu-serial": the CPU backend's compiler and kernel objects, with every
// launch running its blocks one after another on one thread. It is built from opkit's public
// headers alone (docs/backends.md walks through it) and registered by the tests that use it.
#pragma once

namespace opkit::test {

// Registers "cpu-serial" once per process (later calls do nothing).
void register_cpu_serial_backend();

}  // namespace opkit::test
