#include "host_bytes_in_flight.hpp"

#include <openssl/crypto.h>

#include <list>
#include <mutex>

#include "opkit/device.hpp"

namespace opkit::ops::detail {

namespace {

struct Parked {
  Event copied;
  std::vector<std::uint8_t> bytes;
};

// Never destroyed: its events belong to contexts that may be gone by the time statics are.
struct Parking {
  std::mutex mutex;
  std::list<Parked> parked;
};

Parking& parking() {
  static auto* p = new Parking;
  return *p;
}

bool passed(const Parked& p) {
  try {
    return p.copied.query();
  } catch (...) {  // a faulted context runs none of its work any more: nothing will read them
    return true;
  }
}

// Wipes and frees what has been copied (the caller holds the lock).
void release_passed(Parking& p) {
  for (auto it = p.parked.begin(); it != p.parked.end();) {
    if (!passed(*it)) {
      ++it;
      continue;
    }
    OPENSSL_cleanse(it->bytes.data(), it->bytes.size());
    it = p.parked.erase(it);
  }
}

}  // namespace

void park_until_copied(std::vector<std::uint8_t> bytes, const Device& device, const Stream& stream) {
  Event copied = device.create_event();
  copied.record(stream);
  Parking& p = parking();
  const std::lock_guard<std::mutex> lock(p.mutex);
  release_passed(p);
  p.parked.push_back({std::move(copied), std::move(bytes)});
}

void release_copied() {
  Parking& p = parking();
  const std::lock_guard<std::mutex> lock(p.mutex);
  if (!p.parked.empty()) release_passed(p);
}

}  // namespace opkit::ops::detail
