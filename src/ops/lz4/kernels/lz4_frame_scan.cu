// The block index of frames in device memory, found where the data lives: the walk of each item's
// frames copies the bytes the host's frame parser will read there (a frame's magic and
// descriptor, each block size word, each block checksum; an end mark record also holds the
// content checksum after it) into records, so that the compressed data never crosses to the host.
// The walk checks nothing it need not: FrameScanner on the host checks every record, and reads
// anything the walk did not predict from device memory (a corrupt frame's last steps). It stops
// where the structure cannot go on (a size past the item's end, an impossible size word, an
// unknown magic), which bounds the records at about one per 4 bytes of item.
//
// Serial walk (lz4_frame_scan; the reference, and what an item takes when the parallel walk does
// not pay): one thread walks one item. Each block's position depends on the size word before it,
// so it is one dependent memory round trip per block (~0.9 µs on an H100: 3.6 ms for a 256 MiB
// frame of 64 KiB blocks, most of the device API's time beside a 4.7 ms decode).
//
// Parallel walk (lz4_scan_head .. lz4_scan_tail, for large items; device_lz4.cpp chooses): the
// block chain is found as parallel CSV / UTF-8 parsers find record starts, by speculation and
// pointer jumping.
//  1. head: the serial walk up to the first block of the item's first LZ4 frame (`start`), where
//     it stops and keeps that frame's rules: block maximum, block checksums, content checksum.
//  2. tiles: one block per 64 KiB tile reads the item once (16-byte loads, coalesced) and keeps
//     each position p >= start that the walk would step through under those rules as a node: its
//     size word is an end mark (0) or a block (1..max, fitting the item) whose successor
//     p + 4 + size (+ 4) is another such position, LZ4K_SCAN_DEPTH steps on, or an end mark
//     followed by a frame magic or the item's end. The look-ahead is what keeps the graph small:
//     LZ4 output looks like size words often (measured on `lz4 -1` output of binaries and Python
//     sources: 1 position in ~70 for 64 KiB blocks, "xx xx 00 00"; 1 in ~13 for 4 MiB ones), so
//     candidates by the word alone would be ~4 M for 256 MiB, and a cap on them would send every
//     real input to the fallback; after 4 more steps ~1 in 70^4 is left. It costs one random read
//     per word-like position, mostly an L2 hit (the successor lies within a block maximum, in the
//     tiles being read). Nodes are written per tile in position order (a bitmap in shared
//     memory, then a block scan): deterministic, sorted, no atomics.
//  3. index: one block per item, a scan of the tile counts: each node's index.
//  4. link: each node's successor node (binary search in the successor's tile) and weight (its
//     records: 1, + 1 for a block checksum, + 1 for the next frame's header where an end mark is
//     followed directly by an LZ4 frame with the same rules, whose first block is the successor).
//  5. round k = 0, 1, ...: pointer jumping (Wyllie): next_{k+1}(c) = next_k(next_k(c)), weights
//     summed. Marking rides along: a node on the path with fewer than 2^k nodes before it marks
//     next_k of itself as on the path, with its record offset; after round k the first 2^(k+1)
//     path nodes are marked. Only nodes with a predecessor (or `start`) take part: no other node
//     can be reached. log2(path length) + 1 rounds (13 for 4096 blocks); each launch of a round no
//     item needs returns at once. The path is exactly the chain the serial walk follows from
//     `start`, as far as its positions are nodes.
//  6. emit: every path node writes its records at prefix + offset.
//  7. tail: the serial walk resumes after the path's last node (a corrupt block, a frame with
//     other rules, a skippable or legacy frame: anything the graph does not cover).
// So the records are the serial walk's, for any input: nodes only shortcut steps the serial walk
// takes, and whatever is not a node is walked serially. The cost is one read of the item, one
// random read per word-like position, and ~26 small launches: estimated ~0.2-0.3 ms instead of
// 3.6 ms for a 256 MiB frame of 4096 blocks (docs/lz4.md; not yet measured). Pointer jumping
// rather than one thread following the successors: that would again be one dependent (L2) read
// per block. Work and memory are bounded: at most LZ4K_SCAN_TILE_CAP nodes a tile and the item's
// node slots (device_lz4.cpp: one per 256 bytes; a full 64 KiB block compresses to 266 bytes at
// best), or the item has no graph and its tail walks it serially; a position costs at most
// LZ4K_SCAN_DEPTH + 2 reads of the item; the rounds, a few reads per node each.
//
// Launch (serial walk): any 1-D block, grid = ceil(count / blockDim.x). Item i is base[item_at[i],
// + item_size[i]); its records go to records[record_at[i] ..], at most record_cap[i] of them, and
// record_count[i] says how many the walk made (more than the cap: run again with more room). The
// parallel walk's kernels take a Lz4ScanPlan (lz4_scan.h); device_lz4.cpp launches them.
#include "lz4_scan.h"

#define LZ4K_FRAME_MAGIC 0x184D2204u
#define LZ4K_LEGACY_MAGIC 0x184C2102u
#define LZ4K_LEGACY_LIMIT (8u * 1024u * 1024u + 8u * 1024u * 1024u / 255u + 16u) /* compress_bound(8 MiB) */
#define LZ4K_SCAN_DEPTH 4u /* blocks a node's chain is followed before it is kept */
#define LZ4K_SCAN_BATCH 4u /* chunks a thread of lz4_scan_tiles loads before it examines them */

__device__ __forceinline__ unsigned int lz4k_read32(const unsigned char* p) {
  return (unsigned int)p[0] | ((unsigned int)p[1] << 8) | ((unsigned int)p[2] << 16) | ((unsigned int)p[3] << 24);
}

__device__ __forceinline__ int lz4k_is_magic(unsigned int w) {
  return w == LZ4K_FRAME_MAGIC || w == LZ4K_LEGACY_MAGIC || (w & 0xFFFFFFF0u) == 0x184D2A50u;
}

// Asks L2 for the bytes of [p, p + n) that whole 16-byte units cover (sm_90's bulk prefetch: one
// instruction, nothing waits for it). The walk's cost is one memory round trip per block, the
// size word it must read before it knows where the next block starts; with the range where the
// next block's word can lie already on its way to L2, that round trip is an L2 hit instead of one
// to device memory. A hint only: elsewhere (the CPU backend) it does nothing.
__device__ __forceinline__ void lz4k_prefetch_l2(const unsigned char* p, unsigned long long n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned long long lo = ((unsigned long long)p + 15u) & ~15ull;  // inside the range
  const unsigned long long hi = ((unsigned long long)p + n) & ~15ull;
  if (hi > lo)
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(lo), "r"((unsigned int)(hi - lo)) : "memory");
#else
  (void)p;
  (void)n;
#endif
}

// Record n of an item (kept while n < cap): the bytes at `at`. The bytes are all loaded before any
// is stored (the compiler cannot tell the record from the input, so a load-store loop would wait
// out every load): one memory round trip per record. The whole record is written (zeros past the
// item's end): it goes to the host as it is.
__device__ __forceinline__ void lz4k_record(Lz4ScanRecord* out, unsigned long long cap, unsigned long long n,
                                            const unsigned char* in, unsigned long long size, unsigned long long at) {
  if (n >= cap) return;
  const unsigned long long left = size - at;
  const unsigned int len = left < LZ4K_SCAN_BYTES ? (unsigned int)left : LZ4K_SCAN_BYTES;
  unsigned char bytes[LZ4K_SCAN_BYTES];
#pragma unroll
  for (unsigned int j = 0; j < LZ4K_SCAN_BYTES; ++j) bytes[j] = j < len ? in[at + j] : 0;
  Lz4ScanRecord* r = out + n;
  r->at = at;
  r->len = len;
#pragma unroll
  for (unsigned int j = 0; j < LZ4K_SCAN_BYTES; ++j) r->bytes[j] = bytes[j];
}

// ---- The serial walk ---------------------------------------------------------------------------

struct Lz4Walk {
  const unsigned char* in;
  unsigned long long size;
  Lz4ScanRecord* out;
  unsigned long long cap, n;
  Lz4ScanItem* stop;  // the head walk: stop at the first LZ4 frame's blocks and say where

  __device__ void record(unsigned long long at) {
    lz4k_record(out, cap, n, in, size, at);
    ++n;
  }

  // An LZ4 frame's blocks from `pos` (after the descriptor); returns the position after its end
  // mark (and content checksum), or size + 1 where the walk cannot go on.
  __device__ unsigned long long blocks(unsigned long long pos, unsigned int flg, unsigned int max) {
    const unsigned long long trailer = (flg & 0x10u) ? 4u : 0u;
    // The next two blocks' size words lie within `ahead` bytes of this one's (for blocks up to
    // 64 KiB; larger ones have few words per byte to wait for, and one prefetch stays modest).
    const unsigned long long ahead = 2u * (4u + (max < 65536u ? max : 65536u) + trailer) + 4u;
    for (;;) {
      if (size - pos < 4) return size + 1;
      lz4k_prefetch_l2(in + pos, size - pos < ahead ? size - pos : ahead);
      const unsigned int word = lz4k_read32(in + pos);  // loaded beside the record's bytes
      record(pos);
      pos += 4;
      if (word == 0) return pos + ((flg & 0x04u) ? 4u : 0u);
      const unsigned int stored = word & 0x7FFFFFFFu;
      if (stored == 0 || stored > max || stored + trailer > size - pos) return size + 1;
      pos += stored;
      if (trailer) {
        record(pos);
        pos += 4;
      }
    }
  }

  // A legacy frame's blocks from `pos`: up to the next magic number or the item's end.
  __device__ unsigned long long legacy(unsigned long long pos) {
    while (pos < size) {
      record(pos);
      if (size - pos < 4) return size + 1;
      const unsigned int word = lz4k_read32(in + pos);
      if (lz4k_is_magic(word)) return pos;
      pos += 4;
      if (word == 0 || word > LZ4K_LEGACY_LIMIT || word > size - pos) return size + 1;
      pos += word;
    }
    return pos;
  }

  // The frames from `pos` (a frame's start, or past the item's end) to the end.
  __device__ void frames(unsigned long long pos) {
    while (pos < size) {
      record(pos);
      if (size - pos < 7) return;  // no frame is shorter (the parser says what is wrong)
      const unsigned int magic = lz4k_read32(in + pos);
      if (magic == LZ4K_FRAME_MAGIC) {
        const unsigned int flg = in[pos + 4], id = (in[pos + 5] >> 4) & 7u;
        if (id < 4) return;
        pos += 4 + 2 + ((flg & 0x08u) ? 8u : 0u) + ((flg & 0x01u) ? 4u : 0u) + 1;
        if (pos > size) return;
        if (stop) {
          stop->start = pos;
          stop->prefix = n;
          stop->flg = flg;
          stop->max = 1u << (8 + 2 * id);
          stop->stopped = 1;
          return;
        }
        pos = blocks(pos, flg, 1u << (8 + 2 * id));
      } else if (magic == LZ4K_LEGACY_MAGIC) {
        pos = legacy(pos + 4);
      } else if ((magic & 0xFFFFFFF0u) == 0x184D2A50u) {
        const unsigned long long skip = lz4k_read32(in + pos + 4);
        pos += 8;
        if (skip > size - pos) return;
        pos += skip;
      } else {
        return;
      }
    }
  }
};

extern "C" __global__ void lz4_frame_scan(const unsigned char* base, const unsigned long long* item_at,
                                          const unsigned long long* item_size, unsigned long long count,
                                          const unsigned long long* record_at, const unsigned long long* record_cap,
                                          Lz4ScanRecord* records, unsigned long long* record_count) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  Lz4Walk walk = {base + item_at[i], item_size[i], records + record_at[i], record_cap[i], 0, 0};
  walk.frames(0);
  record_count[i] = walk.n;
}

// ---- The parallel walk -------------------------------------------------------------------------

// The first index in a[0, n) (ascending) whose value exceeds x.
template <class T>
__device__ __forceinline__ unsigned long long lz4k_upper(const T* a, unsigned long long n, unsigned long long x) {
  unsigned long long lo = 0, hi = n;
  while (lo < hi) {
    const unsigned long long mid = (lo + hi) / 2;
    if (a[mid] <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Exclusive prefix sum of x over the block's threads (all of them call it); *total gets the sum.
// buf: 2 * blockDim.x words of shared memory (Hillis-Steele, one barrier per step).
__device__ unsigned int lz4k_block_scan(unsigned int x, unsigned int* buf, unsigned int* total) {
  const unsigned int t = threadIdx.x, n = blockDim.x;
  unsigned int* a = buf;
  unsigned int* b = buf + n;
  a[t] = x;
  __syncthreads();
  for (unsigned int d = 1; d < n; d <<= 1) {
    b[t] = a[t] + (t >= d ? a[t - d] : 0u);
    __syncthreads();
    unsigned int* swap = a;
    a = b;
    b = swap;
  }
  const unsigned int inclusive = a[t];
  *total = a[n - 1];
  __syncthreads();  // buf is free again
  return inclusive - x;
}

// One parallel item: its bytes and the rules of its first LZ4 frame.
struct Lz4Item {
  const unsigned char* in;
  unsigned long long size, start;
  unsigned int flg, max, trailer, tail;  // trailer: block checksum bytes; tail: content checksum bytes
  unsigned int mis;                      // in's address mod 16: tiles start at in - mis
  unsigned long long j, tile0, node0;    // its parallel index, first tile, first node slot
  unsigned long long tiles;
  const Lz4ScanItem* state;
  unsigned long long index;  // the item's index in the call

  __device__ void load(const Lz4ScanPlan& plan, unsigned long long jj) {
    j = jj;
    index = plan.par_item[j];
    in = plan.base + plan.item_at[index];
    size = plan.item_size[index];
    state = plan.item + index;
    start = state->start;
    flg = state->flg;
    max = state->max;
    trailer = (flg & 0x10u) ? 4u : 0u;
    tail = (flg & 0x04u) ? 4u : 0u;
    mis = (unsigned int)((unsigned long long)in & 15u);
    tile0 = plan.tile_base[j];
    tiles = plan.tile_base[j + 1] - tile0;
    node0 = plan.node_base[j];
  }

  // Whether the word w at p (p + 4 <= size) is a step of this frame's walk: an end mark, or a
  // block size in 1..max whose data (and checksum) fit the item. *next: the block's successor.
  __device__ __forceinline__ int step(unsigned long long p, unsigned int w, unsigned long long* next) const {
    if (w == 0) return 1;
    const unsigned int stored = w & 0x7FFFFFFFu;
    if (stored - 1u >= max || stored + trailer > size - p - 4) return 0;
    *next = p + 4 + stored + trailer;
    return 1;
  }

  // Whether an end mark at e looks like one: a frame magic, or the item's end, after it.
  __device__ __forceinline__ int end_plausible(unsigned long long e) const {
    const unsigned long long h = e + 4 + tail;
    if (h >= size || size - h < 7) return 1;
    return lz4k_is_magic(lz4k_read32(in + h));
  }

  // Whether the step w at p (step() said yes) starts a plausible chain: an end mark that looks
  // like one, within LZ4K_SCAN_DEPTH blocks.
  __device__ int plausible(unsigned long long p, unsigned int w, unsigned long long next) const {
    for (unsigned int depth = 0;; ++depth) {
      if (w == 0) return end_plausible(p);
      if (depth == LZ4K_SCAN_DEPTH) return 1;
      p = next;
      if (size - p < 4) return 0;
      w = lz4k_read32(in + p);
      if (!step(p, w, &next)) return 0;
    }
  }

  // The node at position q, or NONE.
  __device__ unsigned int find(const Lz4ScanPlan& plan, unsigned long long q) const {
    const unsigned long long v = q + mis, tile = v / LZ4K_SCAN_TILE;
    if (q < start || q >= size || tile >= tiles) return LZ4K_SCAN_NONE;
    const unsigned int off = (unsigned int)(v % LZ4K_SCAN_TILE);
    const unsigned int count = plan.tile_count[tile0 + tile];
    const unsigned short* slot = plan.tile_slot + (tile0 + tile) * LZ4K_SCAN_TILE_CAP;
    unsigned int lo = 0, hi = count < LZ4K_SCAN_TILE_CAP ? count : LZ4K_SCAN_TILE_CAP;
    while (lo < hi) {
      const unsigned int mid = (lo + hi) / 2;
      if (slot[mid] < off)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == count || lo == LZ4K_SCAN_TILE_CAP || slot[lo] != off) return LZ4K_SCAN_NONE;
    return (unsigned int)(node0 + plan.tile_first[tile0 + tile] + lo);
  }
};

// The 16 bytes of the chunk at virtual offset v (item position v - mis; in - mis + v is 16-byte
// aligned) and the 4 after them, little-endian; zeros outside the item.
__device__ __forceinline__ void lz4k_load_chunk(const Lz4Item& it, unsigned long long v, unsigned int lane[5]) {
  const long long p0 = (long long)v - (long long)it.mis;
  if (p0 >= 0 && (unsigned long long)p0 + 20 <= it.size) {
    const uint4 x = *reinterpret_cast<const uint4*>(it.in + p0);
    lane[0] = x.x;
    lane[1] = x.y;
    lane[2] = x.z;
    lane[3] = x.w;
    lane[4] = *reinterpret_cast<const unsigned int*>(it.in + p0 + 16);
  } else {  // the item's first and last chunks
#pragma unroll
    for (int k = 0; k < 5; ++k) {
      unsigned int word = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const long long q = p0 + 4 * k + b;
        if (q >= 0 && (unsigned long long)q < it.size) word |= (unsigned int)it.in[q] << (8 * b);
      }
      lane[k] = word;
    }
  }
}

// The nodes among the chunk's 16 positions: bit j for position v - mis + j.
__device__ __forceinline__ unsigned int lz4k_chunk_nodes(const Lz4Item& it, unsigned long long v,
                                                         const unsigned int lane[5]) {
  // A step's top byte is 0 or 0x80 (sizes are at most 4 MiB): most chunks have no such byte.
  unsigned int any = 0;
#pragma unroll
  for (int k = 0; k < 5; ++k) {
    const unsigned int m = lane[k] & 0x7F7F7F7Fu;
    any |= (m - 0x01010101u) & ~m & 0x80808080u;
  }
  if (!any) return 0;
  const long long p0 = (long long)v - (long long)it.mis;
  unsigned int maybe = 0;  // a word of 0 or 1..max (~1 position in 70 of LZ4 output)
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const unsigned int w = (j & 3) ? __funnelshift_r(lane[j >> 2], lane[(j >> 2) + 1], 8 * (j & 3)) : lane[j >> 2];
    if (w == 0 || (w & 0x7FFFFFFFu) - 1u < it.max) maybe |= 1u << j;
  }
  unsigned int found = 0;
  for (; maybe; maybe &= maybe - 1) {
    const int j = __ffs((int)maybe) - 1;
    const long long p = p0 + j;
    if (p < (long long)it.start || (unsigned long long)p + 4 > it.size) continue;
    const unsigned int w = lz4k_read32(it.in + p);  // (an L1 hit)
    unsigned long long next = 0;
    if (it.step((unsigned long long)p, w, &next) && it.plausible((unsigned long long)p, w, next)) found |= 1u << j;
  }
  return found;
}

// The head walk: every item's serial walk, stopping at `start` for the parallel items.
extern "C" __global__ void lz4_scan_head(Lz4ScanPlan plan) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= plan.count) return;
  Lz4ScanItem* item = plan.item + i;
  const int parallel = plan.par_of[i] != LZ4K_SCAN_NONE;
  if (parallel) {  // the head walk's fields, all of them (lz4_scan_tiles reads them before `stopped`)
    item->start = item->prefix = 0;
    item->flg = item->max = item->stopped = 0;
  }
  Lz4Walk walk = {
      plan.base + plan.item_at[i], plan.item_size[i], plan.records + plan.record_at[i], plan.record_cap[i], 0,
      parallel ? item : 0};
  walk.frames(0);
  if (!parallel || !item->stopped) plan.record_count[i] = walk.n;
}

// One block (LZ4K_SCAN_THREADS threads) per tile: the tile's nodes, ascending.
extern "C" __global__ void __launch_bounds__(LZ4K_SCAN_THREADS) lz4_scan_tiles(Lz4ScanPlan plan) {
  __shared__ unsigned short found[LZ4K_SCAN_TILE / 16];
  __shared__ unsigned int buf[2 * LZ4K_SCAN_THREADS];
  const unsigned long long tile = blockIdx.x;
  if (tile >= plan.tiles) return;
  Lz4Item it;
  it.load(plan, lz4k_upper(plan.tile_base, plan.par_count + 1, tile) - 1);
  const unsigned int t = threadIdx.x;
  if (!it.state->stopped) {  // the head walk went to the end: no graph
    if (t == 0) plan.tile_count[tile] = 0;
    return;
  }
  // Consecutive threads read consecutive chunks, each thread LZ4K_SCAN_BATCH at a time (loads in
  // flight while it examines them). Chunks wholly before `start` or past the item are skipped.
  const unsigned long long v0 = (tile - it.tile0) * LZ4K_SCAN_TILE;
  const unsigned long long lo = it.start + it.mis, hi = it.size + it.mis;  // virtual
  for (unsigned int c0 = t; c0 < LZ4K_SCAN_TILE / 16; c0 += LZ4K_SCAN_BATCH * LZ4K_SCAN_THREADS) {
    unsigned int lane[LZ4K_SCAN_BATCH][5];
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_SCAN_BATCH; ++u) {
      const unsigned long long v = v0 + 16ull * (c0 + u * LZ4K_SCAN_THREADS);
      if (v + 16 > lo && v + 4 <= hi) lz4k_load_chunk(it, v, lane[u]);
    }
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_SCAN_BATCH; ++u) {
      const unsigned int c = c0 + u * LZ4K_SCAN_THREADS;
      const unsigned long long v = v0 + 16ull * c;
      found[c] = (unsigned short)(v + 16 > lo && v + 4 <= hi ? lz4k_chunk_nodes(it, v, lane[u]) : 0u);
    }
  }
  __syncthreads();
  // Thread t writes the nodes of chunks [16t, 16t + 16), after those of the threads before it.
  const unsigned int per = LZ4K_SCAN_TILE / 16 / LZ4K_SCAN_THREADS;
  unsigned int mine = 0;
  for (unsigned int c = t * per; c < (t + 1) * per; ++c) mine += __popc(found[c]);
  unsigned int total = 0;
  unsigned int at = lz4k_block_scan(mine, buf, &total);
  unsigned short* slot = plan.tile_slot + tile * LZ4K_SCAN_TILE_CAP;
  for (unsigned int c = t * per; c < (t + 1) * per && at < LZ4K_SCAN_TILE_CAP; ++c)
    for (unsigned int bits = found[c]; bits && at < LZ4K_SCAN_TILE_CAP; bits &= bits - 1, ++at)
      slot[at] = (unsigned short)(16 * c + (__ffs((int)bits) - 1));
  if (t == 0) plan.tile_count[tile] = total;
}

// One block (LZ4K_SCAN_THREADS threads) per parallel item: the index of each tile's first node,
// and the item's node count (0 where a tile or the item has more nodes than it may).
extern "C" __global__ void __launch_bounds__(LZ4K_SCAN_THREADS) lz4_scan_index(Lz4ScanPlan plan) {
  __shared__ unsigned int buf[2 * LZ4K_SCAN_THREADS];
  __shared__ unsigned int over;
  const unsigned long long j = blockIdx.x;
  const unsigned int t = threadIdx.x;
  const unsigned long long index = plan.par_item[j];
  Lz4ScanItem* item = plan.item + index;
  if (!item->stopped) {
    if (t == 0) {
      item->nodes = 0;
      item->last = LZ4K_SCAN_NONE;
      item->rounds = 0;
    }
    return;
  }
  const unsigned long long tile0 = plan.tile_base[j], tiles = plan.tile_base[j + 1] - tile0;
  const unsigned long long slots = plan.node_base[j + 1] - plan.node_base[j];
  if (t == 0) over = 0;
  __syncthreads();
  unsigned long long running = 0;
  for (unsigned long long t0 = 0; t0 < tiles; t0 += LZ4K_SCAN_THREADS) {
    const unsigned int count = t0 + t < tiles ? plan.tile_count[tile0 + t0 + t] : 0u;
    if (count > LZ4K_SCAN_TILE_CAP) over = 1;
    unsigned int total = 0;
    const unsigned int before = lz4k_block_scan(count, buf, &total);  // (its barriers order `over`)
    if (t0 + t < tiles) plan.tile_first[tile0 + t0 + t] = (unsigned int)(running + before);
    running += total;
  }
  __syncthreads();
  if (t == 0) {
    item->nodes = over || running > slots ? 0u : (unsigned int)running;
    item->last = LZ4K_SCAN_NONE;
    item->rounds = 0;
  }
}

// The item of node slot g and g's index among its nodes; 0 when g is no node.
__device__ __forceinline__ int lz4k_node(const Lz4ScanPlan& plan, unsigned long long g, Lz4Item& it,
                                         unsigned long long& k) {
  const unsigned long long j = lz4k_upper(plan.node_base, plan.par_count + 1, g) - 1;
  k = g - plan.node_base[j];
  if (k >= plan.item[plan.par_item[j]].nodes) return 0;  // most slots: a cheap no
  it.load(plan, j);
  return 1;
}

// Each node: its position, successor and weight; `start` is the path's first node.
extern "C" __global__ void lz4_scan_link(Lz4ScanPlan plan) {
  for (unsigned long long g = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; g < plan.node_slots;
       g += (unsigned long long)gridDim.x * blockDim.x) {
    Lz4Item it;
    unsigned long long k = 0;
    if (!lz4k_node(plan, g, it, k)) continue;
    // Its tile: the last whose first node is at most k (one that holds k: tiles before an empty one
    // share its first index).
    const unsigned int* first = plan.tile_first + it.tile0;
    const unsigned long long tile = lz4k_upper(first, it.tiles, k) - 1;
    const unsigned long long v =
        tile * LZ4K_SCAN_TILE + plan.tile_slot[(it.tile0 + tile) * LZ4K_SCAN_TILE_CAP + (k - first[tile])];
    const unsigned long long p = v - it.mis;
    plan.node_pos[g] = p;
    const unsigned int w = lz4k_read32(it.in + p);
    unsigned int next = LZ4K_SCAN_NONE, weight = 1;
    if (w == 0) {
      // An end mark: the next frame's first block, where an LZ4 frame with the same rules follows
      // at once (its header record is this node's second). As the serial walk: frames() at h.
      const unsigned long long h = p + 4 + it.tail;
      if (h < it.size && it.size - h >= 7 && lz4k_read32(it.in + h) == LZ4K_FRAME_MAGIC) {
        const unsigned int flg = it.in[h + 4], id = (it.in[h + 5] >> 4) & 7u;
        const unsigned long long first_block = h + 7 + ((flg & 0x08u) ? 8u : 0u) + ((flg & 0x01u) ? 4u : 0u);
        if (((flg ^ it.flg) & 0x14u) == 0 && id >= 4 && (1u << (8 + 2 * id)) == it.max && first_block <= it.size) {
          next = it.find(plan, first_block);
          if (next != LZ4K_SCAN_NONE) weight = 2;
        }
      }
    } else {
      weight = it.trailer ? 2 : 1;
      next = it.find(plan, p + 4 + (w & 0x7FFFFFFFu) + it.trailer);
    }
    plan.node_next[0][g] = next;
    plan.node_weight[0][g] = weight;
    if (next == LZ4K_SCAN_NONE)
      atomicOr(plan.node_tag + g, LZ4K_TAG_LAST);
    else
      atomicOr(plan.node_tag + next, LZ4K_TAG_PRED);
    if (p == it.start) {
      atomicAnd(plan.node_tag + g, ~LZ4K_TAG_UNMARKED);  // marked: on the path from the start
      plan.node_off[g] = 0;
      Lz4ScanItem* item = plan.item + it.index;
      if (next == LZ4K_SCAN_NONE) {
        item->last = (unsigned int)g;
      } else {
        item->rounds = 1;
        atomicOr(plan.more, 1u);
      }
    }
  }
}

// Round k of pointer jumping, with marking (see the top of the file).
extern "C" __global__ void lz4_scan_round(Lz4ScanPlan plan, unsigned int k) {
  if (!*(volatile unsigned int*)(plan.more + k)) return;
  const unsigned int* next_k = plan.node_next[k & 1];
  const unsigned int* weight_k = plan.node_weight[k & 1];
  unsigned int* next_up = plan.node_next[(k + 1) & 1];
  unsigned int* weight_up = plan.node_weight[(k + 1) & 1];
  for (unsigned long long g = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; g < plan.node_slots;
       g += (unsigned long long)gridDim.x * blockDim.x) {
    Lz4Item it;
    unsigned long long k_in_item = 0;
    if (!lz4k_node(plan, g, it, k_in_item)) continue;
    Lz4ScanItem* item = plan.item + it.index;
    // rounds and tags only grow here, and a node's tag only once, by the node before it: a
    // stale read is one this round does not act on.
    if (*(volatile unsigned int*)&item->rounds <= k) continue;
    const unsigned int tag = *(volatile unsigned int*)(plan.node_tag + g), mark = tag >> 8;
    if (!(tag & LZ4K_TAG_PRED) && mark != 0) continue;  // no node leads here, and not the start
    const unsigned int next = next_k[g], weight = weight_k[g];
    if (mark <= k && next != LZ4K_SCAN_NONE) {  // on the path before this round: mark 2^k nodes on
      plan.node_off[next] = plan.node_off[g] + weight;
      const unsigned int next_tag = plan.node_tag[next];
      plan.node_tag[next] = (next_tag & 0xFFu) | ((k + 1) << 8);
      if (next_tag & LZ4K_TAG_LAST) item->last = next;
      atomicMax(&item->rounds, k + 2);
      atomicOr(plan.more + k + 1, 1u);
    }
    next_up[g] = next == LZ4K_SCAN_NONE ? LZ4K_SCAN_NONE : next_k[next];
    weight_up[g] = next == LZ4K_SCAN_NONE ? weight : weight + weight_k[next];
  }
}

// Every path node's records.
extern "C" __global__ void lz4_scan_emit(Lz4ScanPlan plan) {
  for (unsigned long long g = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; g < plan.node_slots;
       g += (unsigned long long)gridDim.x * blockDim.x) {
    Lz4Item it;
    unsigned long long k = 0;
    if (!lz4k_node(plan, g, it, k)) continue;
    const unsigned int tag = plan.node_tag[g];
    if ((tag & LZ4K_TAG_UNMARKED) == LZ4K_TAG_UNMARKED) continue;
    Lz4ScanRecord* out = plan.records + plan.record_at[it.index];
    const unsigned long long cap = plan.record_cap[it.index], n = it.state->prefix + plan.node_off[g];
    const unsigned long long p = plan.node_pos[g];
    const unsigned int w = lz4k_read32(it.in + p);
    lz4k_record(out, cap, n, it.in, it.size, p);
    if (w == 0) {
      if (!(tag & LZ4K_TAG_LAST)) lz4k_record(out, cap, n + 1, it.in, it.size, p + 4 + it.tail);  // the next header
    } else if (it.trailer) {
      lz4k_record(out, cap, n + 1, it.in, it.size, p + 4 + (w & 0x7FFFFFFFu));  // the block checksum
    }
  }
}

// The serial walk after each parallel item's path (from `start` where it has none).
extern "C" __global__ void lz4_scan_tail(Lz4ScanPlan plan) {
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= plan.count || plan.par_of[i] == LZ4K_SCAN_NONE) return;
  const Lz4ScanItem* item = plan.item + i;
  if (!item->stopped) return;  // the head walk's count stands
  Lz4Walk walk = {plan.base + plan.item_at[i], plan.item_size[i], plan.records + plan.record_at[i],
                  plan.record_cap[i],          item->prefix,      0};
  const unsigned long long trailer = (item->flg & 0x10u) ? 4u : 0u, tail = (item->flg & 0x04u) ? 4u : 0u;
  unsigned long long pos = item->start;
  Lz4ScanItem* state = plan.item + i;
  state->path = 0;
  if (item->last != LZ4K_SCAN_NONE) {  // after the path: its last node's records are written
    const unsigned long long p = plan.node_pos[item->last];
    const unsigned int w = lz4k_read32(walk.in + p);
    walk.n += plan.node_off[item->last];
    if (w == 0) {  // an end mark not followed by a frame of the graph's
      walk.n += 1;
      state->path = walk.n - item->prefix;
      walk.frames(p + 4 + tail);
      plan.record_count[i] = walk.n;
      return;
    }
    walk.n += trailer ? 2 : 1;  // a block whose successor is no node
    state->path = walk.n - item->prefix;
    pos = p + 4 + (w & 0x7FFFFFFFu) + trailer;
  }
  walk.frames(walk.blocks(pos, item->flg, item->max));
  plan.record_count[i] = walk.n;
}
