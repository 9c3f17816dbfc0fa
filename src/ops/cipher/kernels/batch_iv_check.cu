// Checks of batch IVs that live in device memory, made where they live (chacha20_counters.cpp):
// the host cannot read them without a copy back.
//
// chacha20 with OpenSSL's 16-byte IV (32-bit little-endian block counter || 96-bit nonce): message
// i of n bytes takes ceil(n / 64) keystream blocks from the IV's counter word on, which must fit
// the 32-bit counter (OpenSSL would carry into the nonce word; opkit refuses, as
// cipher_checks.cpp does for host IVs). One thread per message; first_failing receives the
// lowest failing index (atomicMin) and is left as it was when every message fits. IVs are
// public, so the branch on their counter is too; bytes are loaded one by one (any alignment).
extern "C" __global__ void chacha20_counter_check(const unsigned char* ivs, unsigned long long count,
                                                  unsigned long long message_bytes, const unsigned long long* offsets,
                                                  unsigned long long* first_failing) {
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const unsigned long long n = offsets ? offsets[i + 1] - offsets[i] : message_bytes;
  const unsigned char* iv = ivs + 16 * i;
  const unsigned long long counter =
      static_cast<unsigned long long>(iv[0]) | (static_cast<unsigned long long>(iv[1]) << 8) |
      (static_cast<unsigned long long>(iv[2]) << 16) | (static_cast<unsigned long long>(iv[3]) << 24);
  const unsigned long long blocks = (n + 63) / 64;
  if (blocks > (1ull << 32) - counter) atomicMin(first_failing, i);
}
