/* opkit's stand-in for <stddef.h> under NVRTC. */
#ifndef OPKIT_JIT_STDDEF_H
#define OPKIT_JIT_STDDEF_H
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef long max_align_t;
#ifndef NULL
#define NULL 0
#endif
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif
