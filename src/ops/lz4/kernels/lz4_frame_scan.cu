// The block index of frames in device memory, found where the data lives: one thread walks one
// item's frames (each block's position depends on the size word before it, so the walk is one
// dependent read per block) and copies the bytes the host's frame parser will read there (a frame's
// magic and descriptor, each block size word, each block checksum; an end mark record also holds
// the content checksum after it) into records, so that the compressed data never crosses to the
// host. The walk checks nothing it need not: FrameScanner on the host checks every record, and
// reads anything the walk did not predict from device memory (a corrupt frame's last steps).
// It stops where the structure cannot go on (a size past the item's end, an impossible size word,
// an unknown magic), which bounds the records at about one per 4 bytes of item.
//
// Launch: any 1-D block, grid = ceil(count / blockDim.x). Item i is base[item_at[i], +
// item_size[i]); its records go to records[record_at[i] ..], at most record_cap[i] of them, and
// record_count[i] says how many the walk made (more than the cap: run again with more room).
#include "lz4_scan.h"

#define LZ4K_FRAME_MAGIC 0x184D2204u
#define LZ4K_LEGACY_MAGIC 0x184C2102u
#define LZ4K_LEGACY_LIMIT (8u * 1024u * 1024u + 8u * 1024u * 1024u / 255u + 16u) /* compress_bound(8 MiB) */

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

struct Lz4Walk {
  const unsigned char* in;
  unsigned long long size;
  Lz4ScanRecord* out;
  unsigned long long cap, n;

  // The bytes are all loaded before any is stored (the compiler cannot tell the record from the
  // input, so a load-store loop would wait out every load): one memory round trip per record.
  __device__ void record(unsigned long long at) {
    if (n < cap) {
      const unsigned long long left = size - at;
      const unsigned int len = left < LZ4K_SCAN_BYTES ? (unsigned int)left : LZ4K_SCAN_BYTES;
      unsigned char bytes[LZ4K_SCAN_BYTES];
#pragma unroll
      for (unsigned int j = 0; j < LZ4K_SCAN_BYTES; ++j) bytes[j] = j < len ? in[at + j] : 0;
      // The whole record is written (zeros past the item's end): it goes to the host as it is.
      Lz4ScanRecord* r = out + n;
      r->at = at;
      r->len = len;
#pragma unroll
      for (unsigned int j = 0; j < LZ4K_SCAN_BYTES; ++j) r->bytes[j] = bytes[j];
    }
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

  __device__ void run() {
    unsigned long long pos = 0;
    while (pos < size) {
      record(pos);
      if (size - pos < 7) return;  // no frame is shorter (the parser says what is wrong)
      const unsigned int magic = lz4k_read32(in + pos);
      if (magic == LZ4K_FRAME_MAGIC) {
        const unsigned int flg = in[pos + 4], id = (in[pos + 5] >> 4) & 7u;
        if (id < 4) return;
        pos += 4 + 2 + ((flg & 0x08u) ? 8u : 0u) + ((flg & 0x01u) ? 4u : 0u) + 1;
        if (pos > size) return;
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
  Lz4Walk walk = {base + item_at[i], item_size[i], records + record_at[i], record_cap[i], 0};
  walk.run();
  record_count[i] = walk.n;
}
