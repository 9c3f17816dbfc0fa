/* opkit's stand-in for <math.h> under NVRTC: the CUDA math functions are built-ins. */
#ifndef OPKIT_JIT_MATH_H
#define OPKIT_JIT_MATH_H
#endif
