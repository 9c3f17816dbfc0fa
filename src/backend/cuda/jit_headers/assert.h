/* opkit's stand-in for <assert.h> under NVRTC: the device-side assert is a built-in. */
#ifndef OPKIT_JIT_ASSERT_H
#define OPKIT_JIT_ASSERT_H
#endif
