/* opkit's stand-in for <stdio.h> under NVRTC: device printf is a built-in, nothing else exists. */
#ifndef OPKIT_JIT_STDIO_H
#define OPKIT_JIT_STDIO_H
#include <stddef.h>
#endif
