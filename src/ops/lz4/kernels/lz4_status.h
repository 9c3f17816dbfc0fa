/* Per-block status codes the LZ4 kernels write (0: decoded). Plain C so that the kernels and the
   host code that turns them into messages share one list. */
#pragma once

#define LZ4K_OK 0u
#define LZ4K_INPUT_TRUNCATED 1u /* a length, offset or literal run reads past the block's end */
#define LZ4K_OUTPUT_OVERFLOW 2u /* the block decodes to more than its capacity */
#define LZ4K_BAD_OFFSET 3u      /* a match offset before the start of the block */
#define LZ4K_ENDS_WITH_MATCH 4u /* the block's last sequence is not literals only */
#define LZ4K_BAD_CHECKSUM 5u    /* stored bytes do not hash to the block checksum */
#define LZ4K_ZERO_OFFSET 6u     /* a match offset of 0, which the block format forbids */
#define LZ4K_SHORT_TAIL 7u      /* a match too near the block's end: its last 5 bytes must be literals */
