// LZ4 block decompression, one thread block of LZ4K_DECODE_THREADS per LZ4 block, many blocks
// in parallel. The decoder's cost is its chain of dependent reads, so it works in batches: the
// threads stage the next LZ4K_WINDOW_BYTES of the block in shared memory with one load each;
// thread 0 parses up to LZ4K_BATCH sequences (token, lengths, offset) from there, checking every
// read against the block's end and every write against its capacity (bytes past the window come
// from global memory); then the threads write the batch's output, byte k of a stretch by thread
// k % LZ4K_DECODE_THREADS. A byte is resolved, not copied in order: a literal byte comes from the
// input (the window where it has it); a match byte is the byte `offset` before it, or for an
// overlapping match (offset < length), which repeats the `offset` bytes before it, byte
// j % offset of those. When that source is a match byte of the same stretch the thread follows it
// back (each step lands in an earlier sequence) until it reaches a literal or a byte written
// before the stretch. Thread 0 counts those steps while it parses (a sequence's depth: one more
// than the deepest match of the stretch its source overlaps) and starts a new stretch, behind a
// barrier, where a sequence would need more than LZ4K_CHASE_DEPTH: so no byte costs more than
// LZ4K_CHASE_DEPTH + 1 lookups, and typical data needs a barrier every several sequences instead of
// at every match that reads recent output. Within a stretch every load is independent of the
// stores, and each thread keeps LZ4K_UNROLL of them in flight. Hostile blocks stop at the first
// problem with a status code (lz4_status.h); nothing is read or written outside [in, in + stored)
// and [out, out + cap).
//
// Launch: block = LZ4K_DECODE_THREADS (32) threads, grid = count. Block i reads
// in[in_offsets[i], + in_lengths[i] & 0x7FFFFFFF) (bit 31: stored raw) and writes
// out[out_offsets[i], + out_caps[i]); its decoded size goes to sizes[i], its status to status[i].
#include "lz4_copy.cuh"
#include "lz4_status.h"

#define LZ4K_DECODE_THREADS 32
#ifndef LZ4K_WINDOW_BYTES
#define LZ4K_WINDOW_BYTES 512u
#endif
#ifndef LZ4K_BATCH_LOG
#define LZ4K_BATCH_LOG 6
#endif
#define LZ4K_BATCH (1u << LZ4K_BATCH_LOG)
#ifndef LZ4K_UNROLL
#define LZ4K_UNROLL 8
#endif
// Measured on an H100 (bench/results/2026-12-06-h100-lz4.md), kernels on mixed binaries / Python
// sources / logs in GB/s: depth 0: 27.3 / 34.7 / 54.5; 1: 32.1 / 32.9 / 49.5; 3: 30.9 / 27.3 /
// 44.4; 8: 25.5 / 23.9 / 42.9; unbounded (64): 13.5 on the binaries. 1 has the best worst case.
#ifndef LZ4K_CHASE_DEPTH
#define LZ4K_CHASE_DEPTH 1u
#endif

// One batch, shared by the block's threads. Sequence s writes its literals at out[s] (increasing)
// and then its match; the batch writes out[0] = base up to end, in stretches starting at
// stretch_out[0] = base, stretch_out[1], ...
struct Lz4Batch {
  unsigned char window[LZ4K_WINDOW_BYTES];  // in[lo, lo + window_bytes)
  unsigned int out[LZ4K_BATCH + 1];         // output position of sequence s's literals (out[count] = end)
  unsigned int from[LZ4K_BATCH];            // their input position
  unsigned int literals[LZ4K_BATCH];        // literal bytes
  unsigned int offset[LZ4K_BATCH];          // match offset (0: the block's last sequence)
  unsigned int stretch_out[LZ4K_BATCH];     // where each stretch's output starts
  unsigned char depth[LZ4K_BATCH];          // lookups past the first that sequence s's match bytes need
  unsigned int stretches;                   // stretches in the batch
  unsigned int lo, window_bytes;            // the window's place in the block
  unsigned int count;                       // sequences parsed
  unsigned int next;                        // input position after them
  unsigned int base, end;                   // the batch's output [base, end)
  unsigned int status;                      // LZ4K_OK, or the problem that stops the block
  unsigned int done;                        // the batch ends with the block's last sequence
};

// Thread 0's view of the block's bytes: the window where it has them, else global memory.
struct Lz4Reader {
  const unsigned char* in;
  const unsigned char* window;
  unsigned int lo, n;

  __device__ __forceinline__ unsigned int operator[](unsigned int p) const {
    const unsigned int d = p - lo;  // p >= lo: the parse only moves forward
    return d < n ? window[d] : in[p];
  }
};

// One parsed sequence, before it goes to the batch.
struct Lz4Sequence {
  unsigned int literal_from, literals, match, offset;
};

// Adds the 255-run length extension at in[*ip..] to *length; 0 when the input ends first.
__device__ __forceinline__ int lz4k_extend(const Lz4Reader& in, unsigned int end, unsigned int* ip,
                                           unsigned long long* length) {
  unsigned int b;
  do {
    if (*ip >= end) return 0;
    b = in[(*ip)++];
    *length += b;
  } while (b == 255u);
  return 1;
}

// Thread 0: the sequence at `*ip` with output at `op` into *seq; returns LZ4K_OK or the problem,
// and sets *done for the block's last sequence (literals only).
__device__ unsigned int lz4k_parse(const Lz4Reader& in, unsigned int end, unsigned int* ip, unsigned int op,
                                   unsigned int cap, Lz4Sequence* seq, unsigned int* done) {
  if (*ip >= end) return LZ4K_INPUT_TRUNCATED;
  const unsigned int token = in[(*ip)++];
  unsigned long long literals = token >> 4;
  if (literals == 15u && !lz4k_extend(in, end, ip, &literals)) return LZ4K_INPUT_TRUNCATED;
  if (literals > end - *ip) return LZ4K_INPUT_TRUNCATED;
  if (literals > cap - op) return LZ4K_OUTPUT_OVERFLOW;
  seq->literal_from = *ip;
  seq->literals = (unsigned int)literals;
  seq->match = 0;
  seq->offset = 0;
  *ip += (unsigned int)literals;
  if (*ip == end) {  // the last sequence: literals only
    *done = 1;
    return LZ4K_OK;
  }
  if (end - *ip < 2u) return LZ4K_INPUT_TRUNCATED;
  const unsigned int offset = in[*ip] | (in[*ip + 1] << 8);
  *ip += 2;
  const unsigned int match_at = op + (unsigned int)literals;
  if (offset == 0u) return LZ4K_ZERO_OFFSET;
  if (offset > match_at) return LZ4K_BAD_OFFSET;
  unsigned long long match = (token & 15u);
  if (match == 15u && !lz4k_extend(in, end, ip, &match)) return LZ4K_INPUT_TRUNCATED;
  match += 4u;
  if (match > cap - match_at) return LZ4K_OUTPUT_OVERFLOW;
  if (*ip == end) return LZ4K_ENDS_WITH_MATCH;  // a block must end with literals
  seq->offset = offset;
  seq->match = (unsigned int)match;
  return LZ4K_OK;
}

// The last sequence among the first `count` whose output starts at or before p (the batch's first
// starts at base <= p): LZ4K_BATCH_LOG steps whatever the count, no divergent loop.
__device__ __forceinline__ unsigned int lz4k_sequence_of(const Lz4Batch& b, unsigned int count, unsigned int p) {
  unsigned int s = 0;
#pragma unroll
  for (unsigned int half = LZ4K_BATCH / 2; half > 0; half >>= 1)
    if (s + half < count && b.out[s + half] <= p) s += half;
  return s;
}

// Where output byte p of the stretch starting at `lo` comes from: the input (the window where it
// has the byte) or output written before the stretch. An address, not the byte: the caller loads
// the bytes of LZ4K_UNROLL such addresses back to back, with no branch between the loads to wait
// them out. At most depth[s] + 1 steps (thread 0 made sure of it).
__device__ __forceinline__ const unsigned char* lz4k_source(const Lz4Batch& b, const unsigned char* in,
                                                            const unsigned char* out, unsigned int lo, unsigned int p) {
  unsigned int s = lz4k_sequence_of(b, b.count, p);
  for (;;) {
    const unsigned int d = p - b.out[s], literals = b.literals[s];
    if (d < literals) {
      const unsigned int ip = b.from[s] + d, w = ip - b.lo;
      return w < b.window_bytes ? &b.window[w] : in + ip;
    }
    // The match: byte m of it repeats byte m % offset of the `offset` bytes before it.
    const unsigned int m = d - literals, offset = b.offset[s];
    p = b.out[s] + literals - offset + (m < offset ? m : m % offset);
    if (p < lo) return out + p;
    s = lz4k_sequence_of(b, s + 1, p);  // p is before sequence s's match: in s's literals or earlier
  }
}

// Thread 0: the depth of a match whose source is [source, source_end), in the stretch whose
// sequences start at `first`: one more than the deepest of those matches it overlaps (0: none).
// Sequences 0..count-1 are parsed and b.out[count] is set (where sequence count - 1 ends). Walks
// back from the newest sequence and stops at the first whose output ends at or before the source.
__device__ __forceinline__ unsigned int lz4k_depth(const Lz4Batch& b, unsigned int first, unsigned int count,
                                                   unsigned int source, unsigned int source_end) {
  unsigned int depth = 0;
  for (unsigned int s = count; s-- > first;) {
    const unsigned int match_at = b.out[s] + b.literals[s], match_end = b.out[s + 1];
    if (match_end <= source) break;
    if (match_at < source_end && match_at < match_end && b.depth[s] + 1u > depth) depth = b.depth[s] + 1u;
  }
  return depth;
}

// 32 blocks per SM (the hardware's most) at 64 registers a thread.
extern "C" __global__ void __launch_bounds__(LZ4K_DECODE_THREADS, 32)
    lz4_decompress(const unsigned char* in_base, const unsigned long long* in_offsets, const unsigned int* in_lengths,
                   unsigned char* out_base, const unsigned long long* out_offsets, const unsigned int* out_caps,
                   unsigned int* sizes, unsigned int* status) {
  const unsigned int block = blockIdx.x;
  const unsigned int t = threadIdx.x;
  const unsigned char* in = in_base + in_offsets[block];
  unsigned char* out = out_base + out_offsets[block];
  const unsigned int stored = in_lengths[block] & 0x7FFFFFFFu;
  const unsigned int cap = out_caps[block];

  if (in_lengths[block] & 0x80000000u) {  // stored raw
    const int fits = stored <= cap;
    if (fits) lz4k_copy(out, in, stored, t, LZ4K_DECODE_THREADS);
    if (t == 0) {
      sizes[block] = fits ? stored : 0u;
      status[block] = fits ? LZ4K_OK : LZ4K_OUTPUT_OVERFLOW;
    }
    return;
  }

  __shared__ Lz4Batch batch;
  if (t == 0) {
    batch.next = 0;
    batch.end = 0;
    batch.status = LZ4K_OK;
    batch.done = 0;
  }
  __syncthreads();
  for (;;) {
    // Stage the window: one load per thread per 32 bytes, all in flight at once.
    const unsigned int lo = batch.next;
    const unsigned int left = stored - lo;
    const unsigned int n = left < LZ4K_WINDOW_BYTES ? left : LZ4K_WINDOW_BYTES;
    lz4k_copy(batch.window, in + lo, n, t, LZ4K_DECODE_THREADS);
    __syncthreads();
    if (t == 0) {  // parse while the next token lies in the window (the first one always)
      const Lz4Reader reader = {in, batch.window, lo, n};
      unsigned int ip = lo, op = batch.end, count = 0, status = LZ4K_OK, done = 0;
      unsigned int stretches = 1, first = 0, stretch_lo = op;  // the stretch being filled
      batch.lo = lo;
      batch.window_bytes = n;
      batch.base = op;
      batch.stretch_out[0] = op;
      while (count < LZ4K_BATCH && (count == 0 || ip - lo < n)) {
        Lz4Sequence q;
        status = lz4k_parse(reader, stored, &ip, op, cap, &q, &done);
        if (status != LZ4K_OK) break;
        batch.out[count] = op;
        batch.from[count] = q.literal_from;
        batch.literals[count] = q.literals;
        batch.offset[count] = q.offset;
        unsigned int depth = 0;
        if (q.match != 0u) {
          const unsigned int source = op + q.literals - q.offset;
          const unsigned int source_end = source + (q.match < q.offset ? q.match : q.offset);
          if (source_end > stretch_lo) {  // it reads the stretch's own output
            depth = lz4k_depth(batch, first, count, source, source_end);
            if (depth > LZ4K_CHASE_DEPTH) {  // too deep: a new stretch, after what is written so far
              batch.stretch_out[stretches++] = op;
              first = count;
              stretch_lo = op;
              depth = 0;
            }
          }
        }
        batch.depth[count] = (unsigned char)depth;
        op += q.literals + q.match;
        ++count;
        if (done) break;
      }
      batch.out[count] = op;
      batch.count = count;
      batch.stretches = stretches;
      batch.next = ip;
      batch.end = op;
      batch.status = status;
      batch.done = done;
    }
    __syncthreads();
    if (batch.status != LZ4K_OK) break;
    // The batch's output stretch by stretch, LZ4K_UNROLL bytes per thread at a time: all loads,
    // then all stores; a barrier between stretches makes one's bytes readable by the next.
    const unsigned int stretches = batch.stretches, end = batch.end;
    for (unsigned int g = 0; g < stretches; ++g) {
      const unsigned int lo_out = batch.stretch_out[g];
      const unsigned int total = (g + 1 < stretches ? batch.stretch_out[g + 1] : end) - lo_out;
      const unsigned int stride = LZ4K_DECODE_THREADS * LZ4K_UNROLL;
      for (unsigned int k0 = 0; k0 < total; k0 += stride) {
        const unsigned char* from[LZ4K_UNROLL];
        unsigned char v[LZ4K_UNROLL];
#pragma unroll
        for (unsigned int u = 0; u < LZ4K_UNROLL; ++u) {
          const unsigned int k = k0 + u * LZ4K_DECODE_THREADS + t;
          from[u] = k < total ? lz4k_source(batch, in, out, lo_out, lo_out + k) : batch.window;
        }
#pragma unroll
        for (unsigned int u = 0; u < LZ4K_UNROLL; ++u) v[u] = *from[u];
#pragma unroll
        for (unsigned int u = 0; u < LZ4K_UNROLL; ++u) {
          const unsigned int k = k0 + u * LZ4K_DECODE_THREADS + t;
          if (k < total) out[lo_out + k] = v[u];
        }
      }
      if (g + 1 < stretches) __syncthreads();
    }
    const unsigned int done = batch.done;
    __syncthreads();  // the next batch overwrites the window and reads these bytes
    if (done) break;
  }
  if (t == 0) {
    sizes[block] = batch.status == LZ4K_OK ? batch.end : 0u;
    status[block] = batch.status;
  }
}
