// The CPU backend's shim: with it, CUDA C++ kernel source compiles as host C++17 and runs one CUDA
// thread per call of the generated entry point (see docs/cpu-backend.md for what is supported).
// The backend compiles in two passes: `__global__` and `__shared__` survive preprocessing as
// tokens, and the backend rewrites them in the preprocessed text before the real compile.
// __global__ and __shared__ expand to themselves (so `#ifdef __global__` holds) and are defined
// before the system_header pragma: expansions of a system header's macros are marked as system
// code in the preprocessed output, which would split these tokens from their declarations.
#define __global__ __global__
#define __shared__ __shared__
#pragma GCC system_header

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "the opkit CPU backend compiles kernels as C++17 or later"
#endif

// Device-side assert() must end the launch, not abort the process: route glibc's assert through
// opkit (the macro must precede every inclusion of <assert.h>).
#define __assert_fail opkit_cpu_assert_fail
#include <assert.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>  // before __noinline__ is defined: libstdc++'s shared_ptr uses __attribute__((__noinline__))
#include <new>
#include <type_traits>
#include <utility>

#include "opkit_cpu_abi.h"

#define OPKIT_CPU_BACKEND 1

// ---- Qualifiers --------------------------------------------------------------------------------
// (__global__ and __shared__ are at the top.) The backend replaces them after preprocessing:
// __global__ by nothing, __shared__ by `static thread_local` (one copy per OS thread, and each OS
// thread runs one block at a time), `extern __shared__ T name[];` by a pointer to the block's
// dynamic shared memory.
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __device_builtin__
#define __cudart_builtin__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __cluster_dims__(...)

// ---- Vector types (CUDA's alignments) ----------------------------------------------------------
#define OPKIT_CPU_VECTOR(T, name, align2, align4)            \
  struct name##1 {                                           \
    T x;                                                     \
  };                                                         \
  struct alignas(align2) name##2 {                           \
    T x, y;                                                  \
  };                                                         \
  struct name##3 {                                           \
    T x, y, z;                                               \
  };                                                         \
  struct alignas(align4) name##4 {                           \
    T x, y, z, w;                                            \
  };                                                         \
  static inline name##1 make_##name##1(T x) {                \
    return name##1 {x};                                      \
  }                                                          \
  static inline name##2 make_##name##2(T x, T y) {           \
    return name##2 {x, y};                                   \
  }                                                          \
  static inline name##3 make_##name##3(T x, T y, T z) {      \
    return name##3 {x, y, z};                                \
  }                                                          \
  static inline name##4 make_##name##4(T x, T y, T z, T w) { \
    return name##4 {x, y, z, w};                             \
  }

OPKIT_CPU_VECTOR(signed char, char, 2, 4)
OPKIT_CPU_VECTOR(unsigned char, uchar, 2, 4)
OPKIT_CPU_VECTOR(short, short, 4, 8)
OPKIT_CPU_VECTOR(unsigned short, ushort, 4, 8)
OPKIT_CPU_VECTOR(int, int, 8, 16)
OPKIT_CPU_VECTOR(unsigned int, uint, 8, 16)
OPKIT_CPU_VECTOR(long, long, 2 * sizeof(long), 16)
OPKIT_CPU_VECTOR(unsigned long, ulong, 2 * sizeof(long), 16)
OPKIT_CPU_VECTOR(long long, longlong, 16, 16)
OPKIT_CPU_VECTOR(unsigned long long, ulonglong, 16, 16)
OPKIT_CPU_VECTOR(float, float, 8, 16)
OPKIT_CPU_VECTOR(double, double, 16, 16)
#undef OPKIT_CPU_VECTOR

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}  // NOLINT: implicit as in CUDA
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ---- Launch variables: per OS thread, written by the host before each CUDA thread runs ----------
static thread_local uint3 threadIdx;
static thread_local uint3 blockIdx;
static thread_local dim3 blockDim;
static thread_local dim3 gridDim;
static constexpr int warpSize = 32;

namespace opkit_cpu {

static const opkit_cpu_runtime* runtime;

// What `extern __shared__ T name[];` is initialised from: converts to any T*.
struct dynamic_shared_memory {
  template <class T>
  operator T*() const {  // NOLINT: implicit by design
    return reinterpret_cast<T*>(runtime->dynamic_shared());
  }
};
static inline dynamic_shared_memory dynamic_shared() {
  return {};
}

[[noreturn]] static inline void trap(const char* message) {
  runtime->trap(message);
  __builtin_unreachable();
}

template <class... A>
struct always_false : std::false_type {};

template <class T>
static inline T bits_as(const void* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// Float -> integer conversion as the GPU does it: NaN gives 0, out-of-range values saturate.
template <class I, class F>
static inline I saturate_to(F rounded) {
  if (rounded != rounded) return 0;
  if (rounded <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (rounded >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(rounded);
}

}  // namespace opkit_cpu

extern "C" inline void opkit_cpu_assert_fail(const char* expr, const char* file, unsigned int line,
                                             const char* function) noexcept {
  char message[512];
  snprintf(message, sizeof message, "%s:%u: %s: device-side assertion `%s' failed", file, line, function, expr);
  opkit_cpu::trap(message);
}

// ---- Synchronisation ---------------------------------------------------------------------------
static inline void __syncthreads() {
  opkit_cpu::runtime->barrier(1);
}
static inline int __syncthreads_count(int predicate) {
  return opkit_cpu::runtime->barrier(predicate != 0);
}
static inline int __syncthreads_and(int predicate) {
  // Every live thread passed a true predicate iff the count equals the block's live threads;
  // exited threads do not count, as on the GPU, so count the false ones instead.
  return opkit_cpu::runtime->barrier(predicate == 0) == 0;
}
static inline int __syncthreads_or(int predicate) {
  return opkit_cpu::runtime->barrier(predicate != 0) != 0;
}
static inline void __threadfence_block() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
static inline void __threadfence_system() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
[[noreturn]] static inline void __trap() {
  opkit_cpu::trap("__trap() called");
}
[[noreturn]] static inline void __brkpt() {
  opkit_cpu::trap("__brkpt() called");
}
static inline void __nanosleep(unsigned int) {}
static inline long long clock64() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

// ---- Warp-level primitives: refused at compile time ---------------------------------------------
// The threads of a block run one after another (fibers switch only at __syncthreads), so there is
// no warp executing in lockstep; emulating one silently wrong is worse than refusing.
#define OPKIT_CPU_NO_WARP(name)                                                                        \
  template <class... A>                                                                                \
  static inline unsigned int name(A...) {                                                              \
    static_assert(opkit_cpu::always_false<A...>::value,                                                \
                  "opkit CPU backend: " #name                                                          \
                  " is a warp-level primitive, which the CPU backend does "                            \
                  "not support (the threads of a block do not run as warps there). Use shared memory " \
                  "and __syncthreads(), or guard the code with #ifdef __CUDA_ARCH__.");                \
    return 0;                                                                                          \
  }
OPKIT_CPU_NO_WARP(__shfl_sync)
OPKIT_CPU_NO_WARP(__shfl_up_sync)
OPKIT_CPU_NO_WARP(__shfl_down_sync)
OPKIT_CPU_NO_WARP(__shfl_xor_sync)
OPKIT_CPU_NO_WARP(__shfl)
OPKIT_CPU_NO_WARP(__shfl_up)
OPKIT_CPU_NO_WARP(__shfl_down)
OPKIT_CPU_NO_WARP(__shfl_xor)
OPKIT_CPU_NO_WARP(__ballot_sync)
OPKIT_CPU_NO_WARP(__ballot)
OPKIT_CPU_NO_WARP(__all_sync)
OPKIT_CPU_NO_WARP(__any_sync)
OPKIT_CPU_NO_WARP(__uni_sync)
OPKIT_CPU_NO_WARP(__all)
OPKIT_CPU_NO_WARP(__any)
OPKIT_CPU_NO_WARP(__activemask)
OPKIT_CPU_NO_WARP(__syncwarp)
OPKIT_CPU_NO_WARP(__match_any_sync)
OPKIT_CPU_NO_WARP(__match_all_sync)
OPKIT_CPU_NO_WARP(__reduce_add_sync)
OPKIT_CPU_NO_WARP(__reduce_min_sync)
OPKIT_CPU_NO_WARP(__reduce_max_sync)
OPKIT_CPU_NO_WARP(__reduce_and_sync)
OPKIT_CPU_NO_WARP(__reduce_or_sync)
OPKIT_CPU_NO_WARP(__reduce_xor_sync)
#undef OPKIT_CPU_NO_WARP

// ---- Atomics (relaxed, as CUDA's are; real atomics because blocks run on several OS threads) ----
namespace opkit_cpu {
template <class T, class F>
static inline T atomic_update(T* address, F next) {
  T old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(address, &old, next(old), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class Bits, class F, class Op>
static inline F atomic_float_update(F* address, Op op) {
  Bits* bits = reinterpret_cast<Bits*>(address);
  Bits old = __atomic_load_n(bits, __ATOMIC_RELAXED);
  for (;;) {
    F value = bits_as<F>(&old);
    F updated = op(value);
    Bits wanted = bits_as<Bits>(&updated);
    if (__atomic_compare_exchange_n(bits, &old, wanted, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return value;
  }
}
}  // namespace opkit_cpu

#define OPKIT_CPU_ATOMIC_BUILTIN(name, builtin, T)    \
  static inline T name(T* address, T value) {         \
    return builtin(address, value, __ATOMIC_RELAXED); \
  }
#define OPKIT_CPU_ATOMIC_INTEGER(T)                                                                   \
  OPKIT_CPU_ATOMIC_BUILTIN(atomicAdd, __atomic_fetch_add, T)                                          \
  OPKIT_CPU_ATOMIC_BUILTIN(atomicExch, __atomic_exchange_n, T)                                        \
  OPKIT_CPU_ATOMIC_BUILTIN(atomicAnd, __atomic_fetch_and, T)                                          \
  OPKIT_CPU_ATOMIC_BUILTIN(atomicOr, __atomic_fetch_or, T)                                            \
  OPKIT_CPU_ATOMIC_BUILTIN(atomicXor, __atomic_fetch_xor, T)                                          \
  static inline T atomicCAS(T* address, T compare, T value) {                                         \
    __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    return compare;                                                                                   \
  }                                                                                                   \
  static inline T atomicMin(T* address, T value) {                                                    \
    return opkit_cpu::atomic_update(address, [value](T old) { return value < old ? value : old; });   \
  }                                                                                                   \
  static inline T atomicMax(T* address, T value) {                                                    \
    return opkit_cpu::atomic_update(address, [value](T old) { return value > old ? value : old; });   \
  }
OPKIT_CPU_ATOMIC_INTEGER(int)
OPKIT_CPU_ATOMIC_INTEGER(unsigned int)
OPKIT_CPU_ATOMIC_INTEGER(unsigned long long)
#undef OPKIT_CPU_ATOMIC_INTEGER
OPKIT_CPU_ATOMIC_BUILTIN(atomicSub, __atomic_fetch_sub, int)
OPKIT_CPU_ATOMIC_BUILTIN(atomicSub, __atomic_fetch_sub, unsigned int)
#undef OPKIT_CPU_ATOMIC_BUILTIN

static inline long long atomicMin(long long* address, long long value) {
  return opkit_cpu::atomic_update(address, [value](long long old) { return value < old ? value : old; });
}
static inline long long atomicMax(long long* address, long long value) {
  return opkit_cpu::atomic_update(address, [value](long long old) { return value > old ? value : old; });
}
static inline unsigned short atomicCAS(unsigned short* address, unsigned short compare, unsigned short value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;
}
// ((old >= limit) ? 0 : old + 1) and ((old == 0 || old > limit) ? limit : old - 1), as CUDA defines them.
static inline unsigned int atomicInc(unsigned int* address, unsigned int limit) {
  return opkit_cpu::atomic_update(address, [limit](unsigned int old) { return old >= limit ? 0u : old + 1u; });
}
static inline unsigned int atomicDec(unsigned int* address, unsigned int limit) {
  return opkit_cpu::atomic_update(address,
                                  [limit](unsigned int old) { return (old == 0u || old > limit) ? limit : old - 1u; });
}
static inline float atomicAdd(float* address, float value) {
  return opkit_cpu::atomic_float_update<unsigned int>(address, [value](float old) { return old + value; });
}
static inline double atomicAdd(double* address, double value) {
  return opkit_cpu::atomic_float_update<unsigned long long>(address, [value](double old) { return old + value; });
}
static inline float atomicExch(float* address, float value) {
  return opkit_cpu::atomic_float_update<unsigned int>(address, [value](float) { return value; });
}

// The _block and _system scopes are the same thing here.
#define OPKIT_CPU_ATOMIC_SCOPES(name)                         \
  template <class P, class... V>                              \
  static inline auto name##_block(P* address, V... values) {  \
    return name(address, values...);                          \
  }                                                           \
  template <class P, class... V>                              \
  static inline auto name##_system(P* address, V... values) { \
    return name(address, values...);                          \
  }
OPKIT_CPU_ATOMIC_SCOPES(atomicAdd)
OPKIT_CPU_ATOMIC_SCOPES(atomicSub)
OPKIT_CPU_ATOMIC_SCOPES(atomicExch)
OPKIT_CPU_ATOMIC_SCOPES(atomicMin)
OPKIT_CPU_ATOMIC_SCOPES(atomicMax)
OPKIT_CPU_ATOMIC_SCOPES(atomicInc)
OPKIT_CPU_ATOMIC_SCOPES(atomicDec)
OPKIT_CPU_ATOMIC_SCOPES(atomicCAS)
OPKIT_CPU_ATOMIC_SCOPES(atomicAnd)
OPKIT_CPU_ATOMIC_SCOPES(atomicOr)
OPKIT_CPU_ATOMIC_SCOPES(atomicXor)
#undef OPKIT_CPU_ATOMIC_SCOPES

// ---- Integer intrinsics, with CUDA's exact semantics ---------------------------------------------
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>((v << (shift & 31u)) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>((v << (shift < 32u ? shift : 32u)) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>(v >> (shift & 31u));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>(v >> (shift < 32u ? shift : 32u));
}
// Byte n of the result is byte (s >> 4n) & 7 of the 8-byte value y:x.
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned int result = 0;
  for (int n = 0; n < 4; ++n) {
    unsigned int selector = (s >> (4 * n)) & 7u;
    result |= static_cast<unsigned int>((v >> (8 * selector)) & 0xffu) << (8 * n);
  }
  return result;
}
static inline int __popc(unsigned int x) {
  return __builtin_popcount(x);
}
static inline int __popcll(unsigned long long x) {
  return __builtin_popcountll(x);
}
static inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x));
}
static inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
static inline int __ffs(int x) {
  return __builtin_ffs(x);
}
static inline int __ffsll(long long x) {
  return __builtin_ffsll(x);
}
static inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned int>(x))) << 32) |
         __brev(static_cast<unsigned int>(x >> 32));
}
static inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(x) * y) >> 32);
}
static inline int __mulhi(int x, int y) {
  return static_cast<int>((static_cast<long long>(x) * y) >> 32);
}
static inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
static inline long long __mul64hi(long long x, long long y) {
  return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
// The low 32 bits of the product of the low 24 bits of x and y (sign-extended for __mul24).
static inline int __mul24(int x, int y) {
  long long a = static_cast<long long>(static_cast<int>(static_cast<unsigned int>(x) << 8) >> 8);
  long long b = static_cast<long long>(static_cast<int>(static_cast<unsigned int>(y) << 8) >> 8);
  return static_cast<int>(static_cast<unsigned int>(static_cast<unsigned long long>(a * b)));
}
static inline unsigned int __umul24(unsigned int x, unsigned int y) {
  return (x & 0xffffffu) * (y & 0xffffffu);
}
static inline int __hadd(int x, int y) {
  return static_cast<int>((static_cast<long long>(x) + y) >> 1);
}
static inline int __rhadd(int x, int y) {
  return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1);
}
static inline unsigned int __uhadd(unsigned int x, unsigned int y) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y) >> 1);
}
static inline unsigned int __urhadd(unsigned int x, unsigned int y) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}
static inline unsigned int __sad(int x, int y, unsigned int z) {
  return (x > y ? static_cast<unsigned int>(x) - static_cast<unsigned int>(y)
                : static_cast<unsigned int>(y) - static_cast<unsigned int>(x)) +
         z;
}
static inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) {
  return (x > y ? x - y : y - x) + z;
}
static inline int __dp4a(int a, int b, int c) {
  int sum = c;
  for (int i = 0; i < 4; ++i)
    sum += static_cast<int>(static_cast<signed char>(a >> (8 * i))) * static_cast<signed char>(b >> (8 * i));
  return sum;
}
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
  unsigned int sum = c;
  for (int i = 0; i < 4; ++i) sum += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
  return sum;
}

// ---- Memory access hints: plain loads and stores on the CPU ------------------------------------
template <class T>
static inline T __ldg(const T* p) {
  return *p;
}
template <class T>
static inline T __ldcg(const T* p) {
  return *p;
}
template <class T>
static inline T __ldca(const T* p) {
  return *p;
}
template <class T>
static inline T __ldcs(const T* p) {
  return *p;
}
template <class T>
static inline T __ldlu(const T* p) {
  return *p;
}
template <class T>
static inline T __ldcv(const T* p) {
  return *p;
}
template <class T>
static inline void __stwb(T* p, T v) {
  *p = v;
}
template <class T>
static inline void __stcg(T* p, T v) {
  *p = v;
}
template <class T>
static inline void __stcs(T* p, T v) {
  *p = v;
}
template <class T>
static inline void __stwt(T* p, T v) {
  *p = v;
}

// ---- min / max as CUDA's device overloads (mixed types follow the usual arithmetic conversions)
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
static inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>)
    return std::fmin(static_cast<C>(a), static_cast<C>(b));
  else
    return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
static inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>)
    return std::fmax(static_cast<C>(a), static_cast<C>(b));
  else
    return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
}
static inline unsigned int umin(unsigned int a, unsigned int b) {
  return a < b ? a : b;
}
static inline unsigned int umax(unsigned int a, unsigned int b) {
  return a > b ? a : b;
}
static inline long long llmin(long long a, long long b) {
  return a < b ? a : b;
}
static inline long long llmax(long long a, long long b) {
  return a > b ? a : b;
}
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) {
  return a < b ? a : b;
}
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) {
  return a > b ? a : b;
}

// ---- Floating point: bit casts, conversions, correctly rounded arithmetic, fast-math names -----
static inline float __int_as_float(int x) {
  return opkit_cpu::bits_as<float>(&x);
}
static inline int __float_as_int(float x) {
  return opkit_cpu::bits_as<int>(&x);
}
static inline float __uint_as_float(unsigned int x) {
  return opkit_cpu::bits_as<float>(&x);
}
static inline unsigned int __float_as_uint(float x) {
  return opkit_cpu::bits_as<unsigned int>(&x);
}
static inline double __longlong_as_double(long long x) {
  return opkit_cpu::bits_as<double>(&x);
}
static inline long long __double_as_longlong(double x) {
  return opkit_cpu::bits_as<long long>(&x);
}
static inline int __double2hiint(double x) {
  return static_cast<int>(__double_as_longlong(x) >> 32);
}
static inline int __double2loint(double x) {
  return static_cast<int>(__double_as_longlong(x));
}
static inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>(
      (static_cast<unsigned long long>(static_cast<unsigned int>(hi)) << 32) | static_cast<unsigned int>(lo)));
}

#define OPKIT_CPU_TO_INT(from, F, to, I)                 \
  static inline I __##from##2##to##_rn(F x) {            \
    return opkit_cpu::saturate_to<I>(std::nearbyint(x)); \
  }                                                      \
  static inline I __##from##2##to##_rz(F x) {            \
    return opkit_cpu::saturate_to<I>(std::trunc(x));     \
  }                                                      \
  static inline I __##from##2##to##_ru(F x) {            \
    return opkit_cpu::saturate_to<I>(std::ceil(x));      \
  }                                                      \
  static inline I __##from##2##to##_rd(F x) {            \
    return opkit_cpu::saturate_to<I>(std::floor(x));     \
  }
OPKIT_CPU_TO_INT(float, float, int, int)
OPKIT_CPU_TO_INT(float, float, uint, unsigned int)
OPKIT_CPU_TO_INT(float, float, ll, long long)
OPKIT_CPU_TO_INT(float, float, ull, unsigned long long)
OPKIT_CPU_TO_INT(double, double, int, int)
OPKIT_CPU_TO_INT(double, double, uint, unsigned int)
OPKIT_CPU_TO_INT(double, double, ll, long long)
OPKIT_CPU_TO_INT(double, double, ull, unsigned long long)
#undef OPKIT_CPU_TO_INT
static inline float __int2float_rn(int x) {
  return static_cast<float>(x);
}
static inline float __uint2float_rn(unsigned int x) {
  return static_cast<float>(x);
}
static inline float __ll2float_rn(long long x) {
  return static_cast<float>(x);
}
static inline float __ull2float_rn(unsigned long long x) {
  return static_cast<float>(x);
}
static inline double __int2double_rn(int x) {
  return static_cast<double>(x);
}
static inline double __uint2double_rn(unsigned int x) {
  return static_cast<double>(x);
}
static inline double __ll2double_rn(long long x) {
  return static_cast<double>(x);
}
static inline double __ull2double_rn(unsigned long long x) {
  return static_cast<double>(x);
}
static inline float __double2float_rn(double x) {
  return static_cast<float>(x);
}

// Round-to-nearest-even is the CPU's default mode, and kernels are compiled without contraction
// into FMA, so these are exactly CUDA's _rn operations.
static inline float __fadd_rn(float a, float b) {
  return a + b;
}
static inline float __fsub_rn(float a, float b) {
  return a - b;
}
static inline float __fmul_rn(float a, float b) {
  return a * b;
}
static inline float __fdiv_rn(float a, float b) {
  return a / b;
}
static inline float __fmaf_rn(float a, float b, float c) {
  return std::fma(a, b, c);
}
static inline float __frcp_rn(float a) {
  return 1.0f / a;
}
static inline float __fsqrt_rn(float a) {
  return std::sqrt(a);
}
static inline double __dadd_rn(double a, double b) {
  return a + b;
}
static inline double __dsub_rn(double a, double b) {
  return a - b;
}
static inline double __dmul_rn(double a, double b) {
  return a * b;
}
static inline double __ddiv_rn(double a, double b) {
  return a / b;
}
static inline double __fma_rn(double a, double b, double c) {
  return std::fma(a, b, c);
}
static inline double __drcp_rn(double a) {
  return 1.0 / a;
}
static inline double __dsqrt_rn(double a) {
  return std::sqrt(a);
}

// CUDA's fast approximate intrinsics; the exact function is within their error bounds. glibc
// declares (but does not export) functions with some of these names, hence the macros.
static inline float opkit_cpu_expf(float x) {
  return std::exp(x);
}
static inline float opkit_cpu_exp10f(float x) {
  return std::pow(10.0f, x);
}
static inline float opkit_cpu_logf(float x) {
  return std::log(x);
}
static inline float opkit_cpu_log2f(float x) {
  return std::log2(x);
}
static inline float opkit_cpu_log10f(float x) {
  return std::log10(x);
}
static inline float opkit_cpu_powf(float x, float y) {
  return std::pow(x, y);
}
static inline float opkit_cpu_sinf(float x) {
  return std::sin(x);
}
static inline float opkit_cpu_cosf(float x) {
  return std::cos(x);
}
static inline float opkit_cpu_tanf(float x) {
  return std::tan(x);
}
static inline void opkit_cpu_sincosf(float x, float* s, float* c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
#define __expf opkit_cpu_expf
#define __exp10f opkit_cpu_exp10f
#define __logf opkit_cpu_logf
#define __log2f opkit_cpu_log2f
#define __log10f opkit_cpu_log10f
#define __powf opkit_cpu_powf
#define __sinf opkit_cpu_sinf
#define __cosf opkit_cpu_cosf
#define __tanf opkit_cpu_tanf
#define __sincosf opkit_cpu_sincosf
static inline float __fdividef(float x, float y) {
  return x / y;
}
static inline float fdividef(float x, float y) {
  return x / y;
}
static inline float __saturatef(float x) {
  return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x));
}
// C23 adds some of CUDA's names to <math.h>; newer C libraries declare them themselves.
#if !(defined(__GLIBC__) && __GLIBC_PREREQ(2, 42))
static inline float rsqrtf(float x) {
  return 1.0f / std::sqrt(x);
}
static inline double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}
#endif
static inline float rcbrtf(float x) {
  return 1.0f / std::cbrt(x);
}
static inline double rcbrt(double x) {
  return 1.0 / std::cbrt(x);
}
#if !(defined(__GLIBC__) && __GLIBC_PREREQ(2, 41))
static inline float sinpif(float x) {
  return std::sin(static_cast<float>(M_PI) * x);
}
static inline float cospif(float x) {
  return std::cos(static_cast<float>(M_PI) * x);
}
static inline double sinpi(double x) {
  return std::sin(M_PI * x);
}
static inline double cospi(double x) {
  return std::cos(M_PI * x);
}
#endif
static inline void sincospif(float x, float* s, float* c) {
  *s = sinpif(x);
  *c = cospif(x);
}
static inline void sincospi(double x, double* s, double* c) {
  *s = sinpi(x);
  *c = cospi(x);
}
static inline float norm3df(float a, float b, float c) {
  return std::sqrt(a * a + b * b + c * c);
}
static inline float rnorm3df(float a, float b, float c) {
  return 1.0f / norm3df(a, b, c);
}
static inline double norm3d(double a, double b, double c) {
  return std::sqrt(a * a + b * b + c * c);
}
static inline float normcdff(float x) {
  return 0.5f * std::erfc(-x / static_cast<float>(M_SQRT2));
}
static inline double normcdf(double x) {
  return 0.5 * std::erfc(-x / M_SQRT2);
}

// ---- Entry points: the backend appends one per kernel, built from these -------------------------
namespace opkit_cpu {

template <class T>
using param_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class... P, std::size_t... I>
static inline void call_kernel(void (*kernel)(P...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<param_t<P>*>(args[I])...);
}

template <class R, class... P>
static inline void run_guarded(R (*kernel)(P...), void** args) {
  static_assert(std::is_void_v<R>, "opkit CPU backend: a __global__ function must return void");
  static_assert((std::is_trivially_copyable_v<param_t<P>> && ...),
                "opkit CPU backend: kernel parameters must be trivially copyable");
  // The message is copied out of the handler: trap() switches away and never returns, which
  // must not happen inside a catch block (the exception would stay "caught" on this OS thread).
  char message[512];
  message[0] = '\0';
  try {
    call_kernel(kernel, args, std::index_sequence_for<P...>{});
    return;
  } catch (const std::exception& e) {
    snprintf(message, sizeof message, "kernel threw a C++ exception: %s", e.what());
  } catch (...) {
    snprintf(message, sizeof message, "kernel threw a C++ exception of unknown type");
  }
  trap(message);
}

template <class R, class... P>
struct param_sizes {
  static constexpr std::size_t count = sizeof...(P);
  static constexpr std::size_t values[sizeof...(P) + 1] = {sizeof(param_t<P>)..., 0};
};
template <class R, class... P>
static constexpr param_sizes<R, P...> param_sizes_of(R (*)(P...)) {
  return {};
}

static inline void bind(const opkit_cpu_runtime* rt) {
  runtime = rt;
}

static inline void thread_vars(opkit_cpu_thread_vars* out) {
  out->thread_idx = reinterpret_cast<opkit_cpu_dim*>(&threadIdx);
  out->block_idx = reinterpret_cast<opkit_cpu_dim*>(&blockIdx);
  out->block_dim = reinterpret_cast<opkit_cpu_dim*>(&blockDim);
  out->grid_dim = reinterpret_cast<opkit_cpu_dim*>(&gridDim);
}

}  // namespace opkit_cpu
