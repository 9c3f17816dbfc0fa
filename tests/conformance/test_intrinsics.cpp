// CUDA's integer and bit-cast intrinsics on every device against their definitions, written here
// independently (bit loops, byte tables), on fresh random inputs plus the edge values: on a GPU
// machine this compares the CPU backend's shim with the hardware.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>

#include "conformance/devices.hpp"
#include "opkit/opkit.hpp"

namespace {

OPKIT_CONFORMANCE_DEVICE_SUITE(Intrinsics);

constexpr int kOutputs = 32;

const char* kIntrinsics = R"cuda(
typedef unsigned long long u64;
__global__ void intrinsics(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], s = c[i];
  u64 xy = ((u64)x << 32) | y, yx = ((u64)y << 32) | x;
  unsigned* o = out + 32 * i;
  o[0] = __funnelshift_l(x, y, s);
  o[1] = __funnelshift_r(x, y, s);
  o[2] = __funnelshift_lc(x, y, s);
  o[3] = __funnelshift_rc(x, y, s);
  o[4] = __byte_perm(x, y, s);
  o[5] = __popc(x);
  o[6] = __popcll(xy);
  o[7] = __clz((int)x);
  o[8] = __clzll((long long)xy);
  o[9] = __ffs((int)x);
  o[10] = __ffsll((long long)yx);
  o[11] = __brev(x);
  o[12] = (unsigned)(__brevll(xy) >> 32);
  o[13] = (unsigned)__brevll(xy);
  o[14] = __umulhi(x, y);
  o[15] = (unsigned)__mulhi((int)x, (int)y);
  o[16] = (unsigned)__mul24((int)x, (int)y);
  o[17] = __umul24(x, y);
  o[18] = __sad((int)x, (int)y, s);
  o[19] = __usad(x, y, s);
  o[20] = (unsigned)__hadd((int)x, (int)y);
  o[21] = (unsigned)__rhadd((int)x, (int)y);
  o[22] = __uhadd(x, y);
  o[23] = __urhadd(x, y);
  o[24] = (unsigned)(__umul64hi(xy, yx) >> 32);
  o[25] = (unsigned)__umul64hi(xy, yx);
  o[26] = (unsigned)((u64)__mul64hi((long long)xy, (long long)yx) >> 32);
  o[27] = (unsigned)__mul64hi((long long)xy, (long long)yx);
  o[28] = (unsigned)__dp4a((int)x, (int)y, (int)s);
  o[29] = __dp4a(x, y, s);
  o[30] = __float_as_uint(__uint_as_float(x));
  o[31] = (unsigned)__float2int_rz(__int2float_rn((int)(x >> 8)));
}
)cuda";

using u64 = std::uint64_t;
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 s128;

// CUDA: the 64-bit hi:lo shifted left by (shift & 31) (or min(shift, 32) for _lc); the high word.
std::uint32_t funnel_l(std::uint32_t lo, std::uint32_t hi, unsigned shift) {
  if (shift == 0) return hi;
  if (shift >= 32) return lo;
  return (hi << shift) | (lo >> (32 - shift));
}
// CUDA: hi:lo shifted right by (shift & 31) (or min(shift, 32) for _rc); the low word.
std::uint32_t funnel_r(std::uint32_t lo, std::uint32_t hi, unsigned shift) {
  if (shift == 0) return lo;
  if (shift >= 32) return hi;
  return (lo >> shift) | (hi << (32 - shift));
}
std::uint32_t byte_perm(std::uint32_t x, std::uint32_t y, std::uint32_t s) {
  std::uint8_t bytes[8];
  for (int k = 0; k < 4; ++k) bytes[k] = static_cast<std::uint8_t>(x >> (8 * k));
  for (int k = 0; k < 4; ++k) bytes[4 + k] = static_cast<std::uint8_t>(y >> (8 * k));
  std::uint32_t r = 0;
  for (int n = 0; n < 4; ++n) r |= std::uint32_t{bytes[(s >> (4 * n)) & 7]} << (8 * n);
  return r;
}
template <class T>
unsigned ones(T v) {
  unsigned n = 0;
  for (; v != 0; v >>= 1) n += static_cast<unsigned>(v & 1);
  return n;
}
template <class T>
unsigned leading_zeros(T v) {
  unsigned n = 0;
  for (int bit = sizeof(T) * 8 - 1; bit >= 0 && ((v >> bit) & 1) == 0; --bit) ++n;
  return n;
}
template <class T>
unsigned first_set(T v) {  // 1-based, 0 when none
  for (unsigned bit = 0; bit < sizeof(T) * 8; ++bit)
    if ((v >> bit) & 1) return bit + 1;
  return 0;
}
template <class T>
T reversed(T v) {
  T r = 0;
  for (unsigned bit = 0; bit < sizeof(T) * 8; ++bit) r |= static_cast<T>((v >> bit) & 1) << (sizeof(T) * 8 - 1 - bit);
  return r;
}
std::int64_t sign_extend_24(std::uint32_t v) {
  std::int64_t low = v & 0xffffff;
  return (low & 0x800000) ? low - 0x1000000 : low;
}
std::uint32_t dp4a_signed(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::int64_t sum = static_cast<std::int32_t>(c);
  for (int k = 0; k < 4; ++k) sum += static_cast<std::int8_t>(a >> (8 * k)) * static_cast<std::int8_t>(b >> (8 * k));
  return static_cast<std::uint32_t>(sum);
}
std::uint32_t dp4a_unsigned(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  std::uint64_t sum = c;
  for (int k = 0; k < 4; ++k) sum += ((a >> (8 * k)) & 0xff) * ((b >> (8 * k)) & 0xff);
  return static_cast<std::uint32_t>(sum);
}

std::array<std::uint32_t, kOutputs> reference(std::uint32_t x, std::uint32_t y, std::uint32_t s) {
  const u64 xy = (u64{x} << 32) | y, yx = (u64{y} << 32) | x;
  const std::int32_t sx = static_cast<std::int32_t>(x), sy = static_cast<std::int32_t>(y);
  const u128 uprod = static_cast<u128>(xy) * yx;
  const s128 sprod = static_cast<s128>(static_cast<std::int64_t>(xy)) * static_cast<std::int64_t>(yx);
  const u64 uhi = static_cast<u64>(uprod >> 64), shi = static_cast<u64>(sprod >> 64);
  std::array<std::uint32_t, kOutputs> r{};
  r[0] = funnel_l(x, y, s & 31);
  r[1] = funnel_r(x, y, s & 31);
  r[2] = funnel_l(x, y, s < 32 ? s : 32);
  r[3] = funnel_r(x, y, s < 32 ? s : 32);
  r[4] = byte_perm(x, y, s);
  r[5] = ones(x);
  r[6] = ones(xy);
  r[7] = leading_zeros(x);
  r[8] = leading_zeros(xy);
  r[9] = first_set(x);
  r[10] = first_set(yx);
  r[11] = reversed(x);
  r[12] = static_cast<std::uint32_t>(reversed(xy) >> 32);
  r[13] = static_cast<std::uint32_t>(reversed(xy));
  r[14] = static_cast<std::uint32_t>((u64{x} * y) >> 32);
  r[15] = static_cast<std::uint32_t>(static_cast<u64>(std::int64_t{sx} * sy) >> 32);
  r[16] = static_cast<std::uint32_t>(static_cast<u64>(sign_extend_24(x) * sign_extend_24(y)));
  r[17] = static_cast<std::uint32_t>(u64{x & 0xffffff} * (y & 0xffffff));
  r[18] = static_cast<std::uint32_t>(std::llabs(std::int64_t{sx} - sy)) + s;
  r[19] = (x > y ? x - y : y - x) + s;
  r[20] = static_cast<std::uint32_t>((std::int64_t{sx} + sy) >> 1);
  r[21] = static_cast<std::uint32_t>((std::int64_t{sx} + sy + 1) >> 1);
  r[22] = static_cast<std::uint32_t>((u64{x} + y) >> 1);
  r[23] = static_cast<std::uint32_t>((u64{x} + y + 1) >> 1);
  r[24] = static_cast<std::uint32_t>(uhi >> 32);
  r[25] = static_cast<std::uint32_t>(uhi);
  r[26] = static_cast<std::uint32_t>(shi >> 32);
  r[27] = static_cast<std::uint32_t>(shi);
  r[28] = dp4a_signed(x, y, s);
  r[29] = dp4a_unsigned(x, y, s);
  r[30] = x;
  r[31] = static_cast<std::uint32_t>(static_cast<std::int32_t>(x >> 8));  // exact in a float
  return r;
}

TEST_P(Intrinsics, MatchCudaDefinitionsOnRandomAndEdgeInputs) {
  const std::uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<std::uint32_t> a, b, c;
  const std::uint32_t edges[] = {0u,          1u,          2u,          31u,         32u,
                                 33u,         63u,         0x7fffffu,   0x800000u,   0xffffffu,
                                 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu, 0x01234567u};
  for (std::uint32_t x : edges)
    for (std::uint32_t y : edges) {
      a.push_back(x);
      b.push_back(y);
      c.push_back(static_cast<std::uint32_t>(a.size() % 40));  // shifts 0..39: both sides of 32
    }
  std::uniform_int_distribution<std::uint32_t> any;
  while (a.size() < 4096) {
    a.push_back(any(rng));
    b.push_back(any(rng));
    c.push_back(any(rng) % 3 == 0 ? any(rng) % 64 : any(rng));
  }
  const int n = static_cast<int>(a.size());

  const opkit::Device& device = *target().device;
  auto module = device.compile(opkit::Program(kIntrinsics).name("intrinsics.cu"));
  auto da = device.alloc<std::uint32_t>(n), db = device.alloc<std::uint32_t>(n), dc = device.alloc<std::uint32_t>(n);
  auto out = device.alloc<std::uint32_t>(static_cast<std::size_t>(n) * kOutputs);
  da.copy_from(a);
  db.copy_from(b);
  dc.copy_from(c);
  module.kernel("intrinsics").launch({.grid = (n + 127) / 128, .block = 128}, da, db, dc, out, n);
  std::vector<std::uint32_t> got = out.to_host();
  const char* names[kOutputs] = {"__funnelshift_l",
                                 "__funnelshift_r",
                                 "__funnelshift_lc",
                                 "__funnelshift_rc",
                                 "__byte_perm",
                                 "__popc",
                                 "__popcll",
                                 "__clz",
                                 "__clzll",
                                 "__ffs",
                                 "__ffsll",
                                 "__brev",
                                 "__brevll (hi)",
                                 "__brevll (lo)",
                                 "__umulhi",
                                 "__mulhi",
                                 "__mul24",
                                 "__umul24",
                                 "__sad",
                                 "__usad",
                                 "__hadd",
                                 "__rhadd",
                                 "__uhadd",
                                 "__urhadd",
                                 "__umul64hi (hi)",
                                 "__umul64hi (lo)",
                                 "__mul64hi (hi)",
                                 "__mul64hi (lo)",
                                 "__dp4a (int)",
                                 "__dp4a (unsigned)",
                                 "float bit casts",
                                 "int <-> float"};
  int failures = 0;
  for (int i = 0; i < n && failures < 20; ++i) {
    auto want = reference(a[i], b[i], c[i]);
    for (int k = 0; k < kOutputs; ++k) {
      if (got[static_cast<std::size_t>(i) * kOutputs + k] == want[k]) continue;
      ADD_FAILURE() << names[k] << "(0x" << std::hex << a[i] << ", 0x" << b[i] << ", 0x" << c[i] << ") = 0x"
                    << got[static_cast<std::size_t>(i) * kOutputs + k] << ", CUDA defines 0x" << want[k];
      ++failures;
    }
  }
}

// The reference itself, on the documented values.
TEST(IntrinsicsReference, BytePermAndFunnelShiftKnownValues) {
  // From the PTX prmt description: selector 0x3210 is the identity, 0x0123 reverses the bytes.
  EXPECT_EQ(byte_perm(0x44332211u, 0x88776655u, 0x3210u), 0x44332211u);
  EXPECT_EQ(byte_perm(0x44332211u, 0x88776655u, 0x0123u), 0x11223344u);
  EXPECT_EQ(byte_perm(0x44332211u, 0x88776655u, 0x7654u), 0x88776655u);
  EXPECT_EQ(funnel_l(0x89abcdefu, 0x01234567u, 8), 0x23456789u);
  EXPECT_EQ(funnel_r(0x89abcdefu, 0x01234567u, 8), 0x6789abcdu);
}

}  // namespace
