/* What lz4_frame_scan.cu hands the host: copies of the input where the frame parser will read
   (a frame's magic and descriptor, a block's size word, a block checksum). Plain C so that the
   kernels and the host (device_scan.cpp, device_lz4.cpp) share one layout. */
#pragma once

#define LZ4K_SCAN_BYTES 20u /* magic + the longest descriptor (15 bytes), or an end mark + checksum */

struct Lz4ScanRecord {
  unsigned long long at;                /* offset in the item */
  unsigned int len;                     /* bytes copied: LZ4K_SCAN_BYTES, less at the item's end */
  unsigned char bytes[LZ4K_SCAN_BYTES]; /* item[at, at + len) */
};

/* The parallel walk (lz4_frame_scan.cu's second half). */
#define LZ4K_SCAN_TILE 65536u    /* item bytes a block of lz4_scan_tiles looks at (offsets fit 16 bits) */
#define LZ4K_SCAN_TILE_CAP 1024u /* nodes a tile may hold; more: the item is walked serially */
#define LZ4K_SCAN_THREADS 256u   /* threads of lz4_scan_tiles and lz4_scan_index (their scans assume it) */
#define LZ4K_SCAN_NONE 0xFFFFFFFFu

/* An item's walk between the kernels. The head walk writes the first five fields, the graph
   kernels the next three, the tail walk `path`. */
struct Lz4ScanItem {
  unsigned long long start;  /* the first block of the item's first LZ4 frame */
  unsigned long long prefix; /* records the head walk made before `start` */
  unsigned int flg, max;     /* that frame's FLG byte and block maximum */
  unsigned int stopped;      /* 1: the head walk stopped at `start` (the rest is the graph's and the tail's) */
  unsigned int nodes;        /* nodes of the item's graph (0: none; the tail walks from `start`) */
  unsigned int last;         /* the path's last node, LZ4K_SCAN_NONE while `start` is no node */
  unsigned int rounds;       /* round k of lz4_scan_round works on the item while rounds > k */
  unsigned long long path;   /* the tail: records the path gave (for tests and statistics) */
};

/* Node tags: bit 0, some node's successor is this one; bit 1, it has no successor; bits 8..31, the
   round after which it is on the path (0: start; 0xFFFFFF: not on it). */
#define LZ4K_TAG_PRED 1u
#define LZ4K_TAG_LAST 2u
#define LZ4K_TAG_UNMARKED 0xFFFFFF00u

/* Everything the kernels of one call share: the items (all of them), and for the P items walked
   in parallel (par_item[j] = item, par_of[item] = j or LZ4K_SCAN_NONE) their tiles (tile_base[j]
   .. tile_base[j + 1]) and node slots (node_base[j] .. node_base[j + 1]). */
struct Lz4ScanPlan {
  const unsigned char* base;
  const unsigned long long* item_at;
  const unsigned long long* item_size;
  unsigned long long count;
  const unsigned long long* record_at;
  const unsigned long long* record_cap;
  Lz4ScanRecord* records;
  unsigned long long* record_count;
  Lz4ScanItem* item;
  const unsigned int* par_of;
  const unsigned int* par_item;
  unsigned long long par_count;
  const unsigned long long* tile_base;  /* P + 1 */
  const unsigned long long* node_base;  /* P + 1 */
  unsigned long long tiles, node_slots; /* tile_base[P], node_base[P] */
  unsigned int* tile_count;             /* per tile: nodes found (may exceed the cap) */
  unsigned int* tile_first;             /* per tile: its first node's index in the item's nodes */
  unsigned short* tile_slot;            /* per tile, LZ4K_SCAN_TILE_CAP: node offsets in the tile, ascending */
  unsigned long long* node_pos;         /* per node slot: position in the item */
  unsigned int* node_next[2];           /* pointer jumping: the node 2^k steps on, or NONE */
  unsigned int* node_weight[2];         /* records of the (up to) 2^k nodes from this one */
  unsigned int* node_off;               /* on the path: records before it, from `start` */
  unsigned int* node_tag;               /* LZ4K_TAG_* */
  unsigned int* more;                   /* per round: some item needs it */
};
