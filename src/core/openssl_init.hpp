// OpenSSL's one-time set-up, for code that must have it done before a static of its own is
// constructed (the kernel cache): Sha256Hasher calls it too, so nobody else needs to.
#pragma once

namespace opkit::detail {

// Initialises OpenSSL once, without its exit-time cleanup, so that it outlives every static
// destructor (one waits for background compiles that hash). Throws Error(unavailable).
void init_openssl();

}  // namespace opkit::detail
