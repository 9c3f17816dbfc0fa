/* opkit's stand-in for <stdbool.h> under NVRTC: C++ already has bool, true and false. */
#ifndef OPKIT_JIT_STDBOOL_H
#define OPKIT_JIT_STDBOOL_H
#define __bool_true_false_are_defined 1
#endif
