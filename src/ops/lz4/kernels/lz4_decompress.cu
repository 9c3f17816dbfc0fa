// LZ4 block decompression, one thread block of LZ4K_DECODE_THREADS per LZ4 block, many blocks
// in parallel. A block is a chain of sequences (literals, then a match that repeats earlier
// output), so the decoder works in batches of up to LZ4K_BATCH sequences: the threads stage the
// next LZ4K_WINDOW_BYTES of the block in shared memory with one load each; thread 0 parses the
// batch from there (token, lengths, offset; every read checked against the block's end, every
// write against its capacity; bytes past the window from global memory); then the threads copy.
// The parse is the serial part, one thread of 32, so the common sequence (no length extension,
// wholly in the window) takes one combined check and three independent loads; any other, and any
// problem, goes through the full parse.
//
// Copies are by sequence, not by byte: thread s copies sequence s on its own, its literals and
// then its match, a few bytes at a time with all loads before all stores (the compiler cannot
// prove that the pointers differ, so a plain loop would wait out each load before its store).
// A sequence may read output of earlier sequences only once they are written, so thread 0 cuts
// the batch into epochs, each behind a barrier: a new epoch starts at a sequence whose match
// source overlaps the output of an earlier sequence of the current epoch. A source in the
// sequence's own literals or its own match (overlapping matches repeat the `offset` bytes before
// them) needs no barrier, as the same thread wrote it. Parts longer than LZ4K_SHORT would leave
// the other threads idle, so such a sequence is copied by all threads together, after the epoch's
// short ones. The design before this one resolved each output byte separately (a binary search
// over the batch plus chasing match sources): ~25 instructions a byte in Nsight Compute, where
// this costs a few. Hostile blocks stop at the first problem with a status code (lz4_status.h);
// nothing is read or written outside [in, in + stored) and [out, out + cap).
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
#define LZ4K_BATCH 32u  // one sequence per thread
// Longest literal run or match a thread copies on its own; longer ones are copied by all threads.
#ifndef LZ4K_SHORT
#define LZ4K_SHORT 32u
#endif
// Bytes a thread loads before it stores them when it copies alone.
#ifndef LZ4K_CHUNK
#define LZ4K_CHUNK 8u
#endif
// The same for each thread when all copy a long part: more than 8 spills registers (64 at most).
#define LZ4K_LONG_UNROLL 8u

// One batch, shared by the block's threads. Sequence s writes its literals at out[s] and then
// its match; the batch writes [base, end) of the block's output.
struct Lz4Batch {
  unsigned char window[LZ4K_WINDOW_BYTES];  // in[lo, lo + window_bytes)
  unsigned int out[LZ4K_BATCH];             // output position of sequence s's literals
  unsigned int from[LZ4K_BATCH];            // their input position
  unsigned int literals[LZ4K_BATCH];        // literal bytes
  unsigned int offset[LZ4K_BATCH];          // match offset (0: the block's last sequence)
  unsigned int match[LZ4K_BATCH];           // match bytes (0: the block's last sequence)
  unsigned char epoch[LZ4K_BATCH];          // the epoch of sequence s
  unsigned int long_ones[LZ4K_BATCH];       // bit s of long_ones[e]: sequence s, of epoch e, is long
  unsigned int epochs;                      // epochs in the batch
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
__device__ __forceinline__ unsigned int lz4k_parse(const Lz4Reader& in, unsigned int end, unsigned int* ip,
                                                   unsigned int op, unsigned int cap, Lz4Sequence* seq,
                                                   unsigned int* done) {
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
  const unsigned int low = in[*ip], high = in[*ip + 1];  // two independent loads
  const unsigned int offset = low | (high << 8);
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

// Where sequence s's literals are read from: the window where it holds all of them, else the input.
__device__ __forceinline__ const unsigned char* lz4k_literal_source(const Lz4Batch& b, const unsigned char* in,
                                                                    unsigned int from, unsigned int literals) {
  const unsigned int w = from - b.lo;
  return w < b.window_bytes && literals <= b.window_bytes - w ? &b.window[w] : in + from;
}

// One thread: min(n, LZ4K_CHUNK) bytes from `from` to `to`, every load before the first store.
__device__ __forceinline__ void lz4k_copy_chunk(unsigned char* to, const unsigned char* from, unsigned int n) {
  unsigned char v[LZ4K_CHUNK];
#pragma unroll
  for (unsigned int u = 0; u < LZ4K_CHUNK; ++u) v[u] = u < n ? from[u] : 0;
#pragma unroll
  for (unsigned int u = 0; u < LZ4K_CHUNK; ++u)
    if (u < n) to[u] = v[u];
}

// One thread: the match of `n` bytes at `to` whose source starts `offset` bytes before it. Byte m
// repeats byte m % offset of the source, so where offset < LZ4K_CHUNK the first chunk is copied
// byte by byte with that index, and every later byte from a whole number of periods back, at
// least a chunk back: in a chunk the thread stored earlier, never in the one it is loading.
__device__ __forceinline__ void lz4k_copy_match_alone(unsigned char* to, unsigned int offset, unsigned int n) {
  unsigned int m = 0, back = offset;
  if (offset < LZ4K_CHUNK) {
    const unsigned char* source = to - offset;
    unsigned char v[LZ4K_CHUNK];
    unsigned int r = 0;  // m % offset, kept without a division
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_CHUNK; ++u) {
      v[u] = u < n ? source[r] : 0;
      r = r + 1u == offset ? 0u : r + 1u;
    }
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_CHUNK; ++u)
      if (u < n) to[u] = v[u];
    m = LZ4K_CHUNK;
    back = r == 0u ? LZ4K_CHUNK : LZ4K_CHUNK + offset - r;  // the least multiple of offset >= LZ4K_CHUNK
  }
  for (; m < n; m += LZ4K_CHUNK) lz4k_copy_chunk(to + m, to + m - back, n - m);
}

// All threads: the match of `n` bytes at `to` whose source starts `offset` bytes before it (its
// bytes lie before `to`: the caller made them visible). Byte m repeats source byte m % offset;
// thread t's bytes are m = t, t + threads, ..., so that index moves by threads % offset a step.
__device__ __forceinline__ void lz4k_copy_match_together(unsigned char* to, unsigned int offset, unsigned int n,
                                                         unsigned int t) {
  const unsigned int threads = LZ4K_DECODE_THREADS;
  if (offset >= n) {  // no overlap: a plain copy
    lz4k_copy<LZ4K_LONG_UNROLL>(to, to - offset, n, t, threads);
    return;
  }
  const unsigned char* source = to - offset;
  unsigned int r = offset > threads ? t : t % offset;
  const unsigned int step = offset > threads ? threads : threads % offset;
  for (unsigned int j0 = 0; j0 < n; j0 += threads * LZ4K_LONG_UNROLL) {
    unsigned char v[LZ4K_LONG_UNROLL];
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_LONG_UNROLL; ++u) {
      const unsigned int j = j0 + u * threads + t;
      v[u] = j < n ? source[r] : 0;
      r += step;
      if (r >= offset) r -= offset;
    }
#pragma unroll
    for (unsigned int u = 0; u < LZ4K_LONG_UNROLL; ++u) {
      const unsigned int j = j0 + u * threads + t;
      if (j < n) to[j] = v[u];
    }
  }
}

// All threads: sequence s, a long one: its literals, then (behind a barrier when the match reads
// them) its match.
__device__ __forceinline__ void lz4k_copy_long(const Lz4Batch& b, unsigned int s, const unsigned char* in,
                                               unsigned char* out, unsigned int t) {
  const unsigned int op = b.out[s], literals = b.literals[s], offset = b.offset[s], match = b.match[s];
  lz4k_copy<LZ4K_LONG_UNROLL>(out + op, lz4k_literal_source(b, in, b.from[s], literals), literals, t,
                              LZ4K_DECODE_THREADS);
  if (match == 0u) return;
  const unsigned int match_at = op + literals, source = match_at - offset;
  if (source + (match < offset ? match : offset) > op) __syncthreads();  // it reads the literals
  lz4k_copy_match_together(out + match_at, offset, match, t);
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
      unsigned int epoch = 0, epoch_lo = op, long_ones = 0;  // the epoch being filled
      // The next token at window byte `last` or before has its whole sequence in the window and
      // is not the block's last: the fast path needs no other bounds check.
      const unsigned int last = n < left ? n : left - 1u;
      batch.lo = lo;
      batch.window_bytes = n;
      batch.base = op;
      while (count < LZ4K_BATCH && (count == 0 || ip - lo < n)) {
        Lz4Sequence q;
        // The common sequence, read with three independent loads and checked at once: no length
        // extension, its bytes and the next token in the window, room for its output, a valid
        // offset. Any other goes through lz4k_parse, which also names the problem.
        const unsigned int d = ip - lo, token = d < n ? batch.window[d] : 0xFFu;
        const unsigned int literals = token >> 4, match = (token & 15u) + 4u, after = d + 3u + literals;
        const unsigned int offset =
            batch.window[(after - 2u) % LZ4K_WINDOW_BYTES] | batch.window[(after - 1u) % LZ4K_WINDOW_BYTES] << 8;
        if (literals != 15u && match != 19u && after <= last && literals + match <= cap - op && offset != 0u &&
            offset <= op + literals) {
          q.literal_from = ip + 1u;
          q.literals = literals;
          q.offset = offset;
          q.match = match;
          ip += after - d;
        } else {
          status = lz4k_parse(reader, stored, &ip, op, cap, &q, &done);
          if (status != LZ4K_OK) break;
        }
        // A match that reads output of an earlier sequence of this epoch starts the next epoch.
        const unsigned int source = op + q.literals - q.offset;
        const unsigned int source_end = source + (q.match < q.offset ? q.match : q.offset);
        if (q.match != 0u && source < op && source_end > epoch_lo) {
          batch.long_ones[epoch++] = long_ones;
          long_ones = 0;
          epoch_lo = op;
        }
        if (q.literals > LZ4K_SHORT || q.match > LZ4K_SHORT) long_ones |= 1u << count;
        batch.out[count] = op;
        batch.from[count] = q.literal_from;
        batch.literals[count] = q.literals;
        batch.offset[count] = q.offset;
        batch.match[count] = q.match;
        batch.epoch[count] = (unsigned char)epoch;
        op += q.literals + q.match;
        ++count;
        if (done) break;
      }
      batch.long_ones[epoch] = long_ones;
      batch.epochs = epoch + 1;
      batch.count = count;
      batch.next = ip;
      batch.end = op;
      batch.status = status;
      batch.done = done;
    }
    __syncthreads();
    if (batch.status != LZ4K_OK) break;
    // Thread t's epoch, unless its sequence is long or there is none. Its fields are read in that
    // epoch, not kept in registers through the others (the long copies need them).
    const unsigned int epochs = batch.epochs, done = batch.done;
    const unsigned int mine =
        t < batch.count && !(batch.long_ones[batch.epoch[t]] >> t & 1u) ? batch.epoch[t] : LZ4K_BATCH;
    // Epoch by epoch: the short sequences each by its thread, then the long ones by all threads;
    // the barrier after an epoch makes its output readable by the next (and lets the next batch
    // overwrite the window after the last).
    for (unsigned int e = 0; e < epochs; ++e) {
      if (mine == e) {
        const unsigned int op = batch.out[t], literals = batch.literals[t], match = batch.match[t];
        const unsigned char* literal_source = lz4k_literal_source(batch, in, batch.from[t], literals);
        for (unsigned int k = 0; k < literals; k += LZ4K_CHUNK)
          lz4k_copy_chunk(out + op + k, literal_source + k, literals - k);
        if (match != 0u) lz4k_copy_match_alone(out + op + literals, batch.offset[t], match);
      }
      for (unsigned int long_ones = batch.long_ones[e]; long_ones != 0u; long_ones &= long_ones - 1u)
        lz4k_copy_long(batch, (unsigned int)__ffs((int)long_ones) - 1u, in, out, t);
      __syncthreads();
    }
    if (done) break;
  }
  if (t == 0) {
    sizes[block] = batch.status == LZ4K_OK ? batch.end : 0u;
    status[block] = batch.status;
  }
}
