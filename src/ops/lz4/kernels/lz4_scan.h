/* What lz4_frame_scan.cu hands the host: copies of the input where the frame parser will read
   (a frame's magic and descriptor, a block's size word, a block checksum). Plain C so that the
   kernel and the host reader (device_scan.cpp) share one layout. */
#pragma once

#define LZ4K_SCAN_BYTES 20u /* magic + the longest descriptor (15 bytes), or an end mark + checksum */

struct Lz4ScanRecord {
  unsigned long long at;                /* offset in the item */
  unsigned int len;                     /* bytes copied: LZ4K_SCAN_BYTES, less at the item's end */
  unsigned char bytes[LZ4K_SCAN_BYTES]; /* item[at, at + len) */
};
