/* The binary interface between the CPU backend (the host side, in libopkit) and a kernel shared
   object built against opkit_cpu_shim.h. Plain C layout, shared by both sides; any change bumps
   OPKIT_CPU_ABI_VERSION (and so the kernel cache key, which hashes this file). */
#ifndef OPKIT_CPU_ABI_H
#define OPKIT_CPU_ABI_H

#include <stddef.h>
#include <stdint.h>

#define OPKIT_CPU_ABI_VERSION 2u
#define OPKIT_CPU_MODULE_SYMBOL "opkit_cpu_module_v1"

#ifdef __cplusplus
extern "C" {
#endif

/* Layout of CUDA's uint3 / dim3. */
typedef struct opkit_cpu_dim {
  unsigned int x, y, z;
} opkit_cpu_dim;

/* Where one OS thread's copies of the kernel's launch variables live (they are thread_local in
   the kernel object; the host writes them before it runs or resumes a CUDA thread). */
typedef struct opkit_cpu_thread_vars {
  opkit_cpu_dim* thread_idx;
  opkit_cpu_dim* block_idx;
  opkit_cpu_dim* block_dim;
  opkit_cpu_dim* grid_dim;
} opkit_cpu_thread_vars;

/* Services the host gives kernel code. */
typedef struct opkit_cpu_runtime {
  /* __syncthreads and its _count/_and/_or forms: returns how many live threads of the block
     passed a non-zero predicate. */
  int (*barrier)(int predicate);
  /* __trap, failed assert, an escaped C++ exception: ends the launch with an error carrying
     `message`. Never returns. */
  void (*trap)(const char* message);
  /* The calling OS thread's `extern __shared__` memory: one address for the thread's lifetime,
     so kernel code may keep it in a thread_local initialised whenever the compiler chooses. */
  unsigned char* (*dynamic_shared)(void);
} opkit_cpu_runtime;

typedef struct opkit_cpu_kernel {
  const char* name;         /* as written in the source or name expression: "k", "f<int>" */
  void (*run)(void** args); /* runs one CUDA thread; args[i] points at parameter i's value */
  size_t param_count;
  const size_t* param_sizes;
} opkit_cpu_kernel;

typedef struct opkit_cpu_module {
  uint32_t abi_version;
  uint32_t kernel_count;
  const opkit_cpu_kernel* kernels;
  void (*bind)(const opkit_cpu_runtime* runtime);  /* called once, right after dlopen */
  void (*thread_vars)(opkit_cpu_thread_vars* out); /* for the calling OS thread */
} opkit_cpu_module;

#ifdef __cplusplus
}
#endif

#endif /* OPKIT_CPU_ABI_H */
